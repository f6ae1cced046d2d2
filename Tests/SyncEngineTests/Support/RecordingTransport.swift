import SyncStreams
import SyncWire

@testable import SyncEngine

/// A transport over `InMemoryTransport` that records every message in both directions (with its encoded
/// size) and can stop a connection from reading its server's messages.
final class RecordingTransport: SyncTransport {
    private let inner: InMemoryTransport
    private let log = Locked<(sent: [ClientMessage], received: [ServerMessage], connections: Int)>(([], [], 0))

    init(inner: InMemoryTransport = InMemoryTransport()) { self.inner = inner }

    /// Every message the client sent, in order.
    var sent: [ClientMessage] { log.withLock { $0.sent } }
    /// Every message the client received, in order.
    var received: [ServerMessage] { log.withLock { $0.received } }
    /// How many connections were made.
    var connections: Int { log.withLock { $0.connections } }

    /// The largest message sent or received, encoded.
    var largestMessage: Int {
        log.withLock { log in
            max(log.sent.map(\.encodedSize).max() ?? 0, log.received.map(\.encodedSize).max() ?? 0)
        }
    }

    func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        log.withLock { $0.connections += 1 }
        return Recorded(inner: inner.connect(to: endpoint), log: log)
    }

    private final class Recorded: SyncClientConnection {
        let events: AsyncStream<SyncTransportEvent>
        private let inner: any SyncClientConnection
        private let log: Locked<(sent: [ClientMessage], received: [ServerMessage], connections: Int)>

        init(
            inner: any SyncClientConnection,
            log: Locked<(sent: [ClientMessage], received: [ServerMessage], connections: Int)>
        ) {
            self.inner = inner
            self.log = log
            let (events, continuation) = AsyncStream<SyncTransportEvent>.makeStream()
            self.events = events
            Task {
                for await event in inner.events {
                    if case .message(let message) = event { log.withLock { $0.received.append(message) } }
                    continuation.yield(event)
                }
                continuation.finish()
            }
        }

        func send(_ message: ClientMessage) {
            log.withLock { $0.sent.append(message) }
            inner.send(message)
        }

        func close() { inner.close() }
    }
}
