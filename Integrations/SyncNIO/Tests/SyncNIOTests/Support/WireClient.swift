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

/// A plain HTTP GET with `curl` (a real HTTP client, a child process waited for with a deadline).
struct HTTPAnswer {
    var status: Int
    var body: String

    static func get(_ url: String) async throws -> HTTPAnswer {
        let curl = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-sS", "--max-time", "30", "-w", "\n%{http_code}", url])
        let status = try await curl.waitForExit()
        guard status == 0, let newline = curl.stdout.lastIndex(of: "\n"),
            let code = Int(curl.stdout[curl.stdout.index(after: newline)...])
        else { throw NIOWireClient.Unexpected(description: "curl \(url) failed (\(status)): \(curl.stderr)") }
        return HTTPAnswer(status: code, body: String(curl.stdout[..<newline]))
    }

    /// The samples of a Prometheus text page: `name{labels}` → value (comments skipped).
    var samples: [String: Double] {
        var samples: [String: Double] = [:]
        for line in body.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
