import Foundation
import SyncEngine
import SyncNIO
import TestSupport

/// A client connection of `NIOWebSocketTransport` driven message by message, for tests that speak the
/// sync protocol to `sync-server-nio` directly: its events are collected as they arrive and handed out one
/// by one, each wait with a deadline.
final class NIOWireClient: Sendable {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    let connection: any SyncClientConnection
    private let events = EventQueue()
    private let reader: Task<Void, Never>

    init(port: Int) throws {
        let transport = try NIOWebSocketTransport(url: "ws://127.0.0.1:\(port)")
        let connection = transport.connect(to: transport.endpoint)
        self.connection = connection
        let events = self.events
        reader = Task { for await event in connection.events { events.append(event) } }
    }

    deinit { reader.cancel() }

    func send(_ message: ClientMessage) { connection.send(message) }

    /// The next event, waiting at most 60 s (scaled for the build).
    func next() async throws -> SyncTransportEvent {
        var event: SyncTransportEvent?
        try await eventually("the next event") {
            event = events.popFirst()
            return event != nil
        }
        guard let event else { throw Unexpected(description: "no event") }
        return event
    }

    /// The next event, which must be a message.
    func nextMessage() async throws -> ServerMessage {
        let event = try await next()
        guard case .message(let message) = event else { throw Unexpected(description: "expected a message: \(event)") }
        return message
    }

    /// Requires `.opened`, says hello with `credential`, returns the answer.
    func hello(_ credential: WireCredential = .anonymous) async throws -> ServerMessage {
        let opened = try await next()
        guard opened == .opened else { throw Unexpected(description: "expected .opened: \(opened)") }
        send(.hello(Hello(credential: credential)))
        return try await nextMessage()
    }

    /// Requires `.opened`, says hello, requires `welcome`.
    func welcome() async throws {
        let answer = try await hello()
        guard case .welcome = answer else { throw Unexpected(description: "expected welcome: \(answer)") }
    }
}

/// Events in arrival order.
private final class EventQueue: @unchecked Sendable {
    // @unchecked Sendable: `events` is used under `lock` only.
    private let lock = NSLock()
    private var events: [SyncTransportEvent] = []

    func append(_ event: SyncTransportEvent) { lock.withLock { events.append(event) } }

    func popFirst() -> SyncTransportEvent? { lock.withLock { events.isEmpty ? nil : events.removeFirst() } }
}
