import SyncServer
import Synchronization
import TestSupport
import Testing

/// A client driven message by message over the in-process transport, for tests that speak the sync
/// protocol to a server directly: its events are collected as they arrive and handed out one by one, each
/// wait with a deadline.
final class WireTestClient: Sendable {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    /// The events received and not yet taken.
    private final class Events: Sendable {
        let received = Mutex<[SyncTransportEvent]>([])
    }

    let connection: any SyncClientConnection
    private let events = Events()
    private let reader: Task<Void, Never>

    private init(_ connection: any SyncClientConnection) {
        self.connection = connection
        let events = self.events
        reader = Task { for await event in connection.events { events.received.withLock { $0.append(event) } } }
    }

    deinit { reader.cancel() }

    /// Connects to `server` in process, says hello (anonymous) and requires `welcome`.
    static func welcomed(to server: SyncServer) async throws -> WireTestClient {
        try await welcomed(on: InMemoryTransport().connect(to: server.endpoint))
    }

    /// Reads `connection` (over any transport), says hello (anonymous) and requires `welcome`.
    static func welcomed(on connection: any SyncClientConnection) async throws -> WireTestClient {
        let client = WireTestClient(connection)
        let opened = try await client.nextEvent()
        guard opened == .opened else { throw Unexpected(description: "expected .opened: \(opened)") }
        client.send(.hello(Hello(credential: .anonymous)))
        guard case .welcome = try await client.next() else { throw Unexpected(description: "expected welcome") }
        return client
    }

    func send(_ message: ClientMessage) { connection.send(message) }

    /// The next event, waiting at most `limit` (scaled under a sanitizer; see `waitUntil`).
    func nextEvent(limit: Duration = .seconds(60)) async throws -> SyncTransportEvent {
        var event: SyncTransportEvent?
        try await waitUntil("the next event", limit: limit) {
            event = events.received.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            return event != nil
        }
        guard let event else { throw Unexpected(description: "no event within \(limit)") }
        return event
    }

    /// The next event, which must be a message.
    func next() async throws -> ServerMessage {
        let event = try await nextEvent()
        guard case .message(let message) = event else { throw Unexpected(description: "expected a message: \(event)") }
        return message
    }

    /// The next message, which must be a download.
    func nextDownload() async throws -> Download {
        let message = try await next()
        guard case .download(let download) = message else {
            throw Unexpected(description: "expected a download: \(message)")
        }
        return download
    }

    /// Binds session `sessionID` to `partition` as `clientFileID` from version 0 and returns the downloads of
    /// the backlog, up to the one with `remainingBytes == 0`.
    @discardableResult
    func bind(_ sessionID: UInt32 = 1, partition: String = "p", clientFileID: UInt64) async throws -> [Download] {
        send(
            .bind(Bind(sessionID: sessionID, partition: partition, clientFileID: clientFileID, downloadedVersion: 0)))
        var downloads: [Download] = []
        repeat { downloads.append(try await nextDownload()) } while downloads.last!.remainingBytes > 0
        return downloads
    }

    /// Uploads `data` on session 1 as client version `clientVersion`, with `origin`.
    func upload(_ clientVersion: UInt64, _ data: [UInt8], origin: ChangesetOrigin? = nil) {
        send(
            .upload(
                Upload(
                    sessionID: 1,
                    changesets: [UploadChangeset(clientVersion: clientVersion, data: data, origin: origin)]
                )))
    }
}
