import Foundation
import SyncStreams
import SyncWire
import TestSupport

@testable import SyncEngine

/// A client connection driven message by message, for tests that speak the sync protocol to a server
/// directly: its events are read as they arrive and handed out one by one, each wait with a deadline.
final class WireClient: Sendable {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    let connection: any SyncClientConnection
    private let events = Locked<[SyncTransportEvent]>([])
    private let reader: Task<Void, Never>

    init(_ endpoint: SyncEndpoint, transport: any SyncTransport = WebSocketTransport.forTests()) {
        let connection = transport.connect(to: endpoint)
        self.connection = connection
        let events = self.events
        reader = Task { for await event in connection.events { events.withLock { $0.append(event) } } }
    }

    deinit { reader.cancel() }

    func send(_ message: ClientMessage) { connection.send(message) }

    /// The next event, waiting at most `limit` (scaled under a sanitizer; see `waitUntil`).
    func next(limit: Duration = .seconds(20)) async throws -> SyncTransportEvent {
        var event: SyncTransportEvent?
        try await waitUntil("the next event", limit: limit) {
            event = events.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            return event != nil
        }
        guard let event else { throw Unexpected(description: "no event within \(limit)") }
        return event
    }

    /// The next event, which must be a message.
    func nextMessage() async throws -> ServerMessage {
        let event = try await next()
        guard case .message(let message) = event else { throw Unexpected(description: "expected a message: \(event)") }
        return message
    }

    /// Requires `.opened`, says hello, requires `welcome`.
    func welcome(_ credential: WireCredential = .anonymous) async throws {
        let opened = try await next()
        guard opened == .opened else { throw Unexpected(description: "expected .opened: \(opened)") }
        send(.hello(Hello(credential: credential)))
        let answer = try await nextMessage()
        // The server's message limit (whatever it is) follows the version.
        guard case .welcome(WireProtocol.version, _?) = answer else {
            throw Unexpected(description: "expected welcome: \(answer)")
        }
    }
}
