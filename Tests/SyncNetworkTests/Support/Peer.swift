import Foundation
import SyncStreams
import SyncWire
import TestSupport

@testable import SyncNetwork

/// A well-behaved client connection for tests: reads its events into a list as they arrive, and hands
/// them out one by one with a deadline.
final class Peer: Sendable {
    struct TimedOut: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }

    let connection: any SyncClientConnection
    private let events = Locked<(queued: [SyncTransportEvent], ended: Bool)>(([], false))
    private let reader: Task<Void, Never>

    /// Connects with `transport` and starts reading (call `welcome()` next).
    init(_ endpoint: SyncEndpoint, transport: WebSocketTransport = WebSocketTransport.forTests()) {
        let connection = transport.connect(to: endpoint)
        self.connection = connection
        let events = self.events
        reader = Task {
            for await event in connection.events { events.withLock { $0.queued.append(event) } }
            events.withLock { $0.ended = true }
        }
    }

    deinit { reader.cancel() }

    /// The next event, waiting at most `seconds` (scaled under a sanitizer; see `waitUntil`).
    func next(seconds: Double = defaultWaitSeconds) async throws -> SyncTransportEvent {
        var event: SyncTransportEvent?
        try await waitUntil("the next event", seconds: seconds) {
            event = events.withLock { events -> SyncTransportEvent? in
                events.queued.isEmpty ? nil : events.queued.removeFirst()
            }
            return event != nil
        }
        guard let event else { throw TimedOut(what: "the next event") }
        return event
    }

    /// Connects and greets in one step (`.opened`, hello, `welcome`): a test with several peers makes each
    /// one when it is about to greet it, since a connection that is open but silent while another peer is
    /// greeted may be closed by the server's hello deadline under load (fresh-clone runs S21-B, S22-B).
    static func welcomed(_ endpoint: SyncEndpoint) async throws -> Peer {
        let peer = Peer(endpoint)
        try await peer.welcome()
        return peer
    }

    /// Requires `.opened`, says hello, requires `welcome`.
    func welcome() async throws {
        let opened = try await next()
        guard opened == .opened else { throw TimedOut(what: ".opened (got \(opened))") }
        connection.send(.hello(Hello(credential: .anonymous)))
        let answer = try await next()
        let welcome = SyncTransportEvent.message(
            .welcome(
                protocolVersion: WireProtocol.version, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize)))
        guard answer == welcome else { throw TimedOut(what: "welcome (got \(answer))") }
    }

    /// Pings and returns whether the next event is the pong.
    func pings(id: UInt64) async throws -> Bool {
        connection.send(.ping(id: id))
        return try await next() == .message(.pong(id: id))
    }

    /// The next event, which must be a download.
    func nextDownload() async throws -> Download {
        let event = try await next()
        guard case .message(.download(let download)) = event else { throw TimedOut(what: "a download, not \(event)") }
        return download
    }
}
