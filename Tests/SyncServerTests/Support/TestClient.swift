import SyncServer
import SyncWire
import TestSupport
import Testing

/// A hand-driven client for server tests: sends messages and awaits the server's answers one by one.
final class TestClient: Sendable {
    let connection: any SyncClientConnection
    let inbox = EventInbox()
    private let reader: Task<Void, Never>

    /// Connects to `server` in process and waits for `.opened`.
    convenience init(_ server: SyncServer) async throws {
        try await self.init(connection: InMemoryTransport().connect(to: server.endpoint))
    }

    /// Reads `connection` (over any transport) and waits for `.opened`.
    init(connection: any SyncClientConnection) async throws {
        let inbox = self.inbox
        self.connection = connection
        reader = Task {
            for await event in connection.events { await inbox.record(event) }
            await inbox.finish()
        }
        let first = try await nextEvent()
        try #require(first == .opened)
    }

    /// Connects, says hello with `credential`, and requires `welcome`.
    static func welcomed(
        to server: SyncServer,
        credential: WireCredential = .anonymous
    ) async throws -> TestClient {
        try await welcomed(on: InMemoryTransport().connect(to: server.endpoint), credential: credential)
    }

    /// Reads `connection`, says hello with `credential`, and requires `welcome`.
    static func welcomed(
        on connection: any SyncClientConnection,
        credential: WireCredential = .anonymous
    ) async throws -> TestClient {
        let client = try await TestClient(connection: connection)
        client.send(.hello(Hello(credential: credential)))
        let answer = try await client.next()
        try #require(
            answer
                == .welcome(
                    protocolVersion: WireProtocol.version, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))
        )
        return client
    }

    deinit { reader.cancel() }

    func send(_ message: ClientMessage) { connection.send(message) }

    /// The next event, waiting up to 60 s (generous: the whole suite runs in parallel, under TSan too).
    func nextEvent() async throws -> SyncTransportEvent {
        var event: SyncTransportEvent?
        try await waitUntil("the next event") {
            event = await inbox.take()
            return event != nil
        }
        return event!
    }

    /// The next event, which must be a message.
    func next() async throws -> ServerMessage {
        let event = try await nextEvent()
        guard case .message(let message) = event else {
            Issue.record("expected a message, got \(event)")
            throw UnexpectedEvent(event: event)
        }
        return message
    }

    /// The next message, which must be a download.
    func nextDownload() async throws -> Download {
        let message = try await next()
        guard case .download(let download) = message else {
            Issue.record("expected a download, got \(message)")
            throw UnexpectedEvent(event: .message(message))
        }
        return download
    }

    /// The next message, which must be an error.
    func nextError() async throws -> ProtocolError {
        let message = try await next()
        guard case .error(let error) = message else {
            Issue.record("expected an error, got \(message)")
            throw UnexpectedEvent(event: .message(message))
        }
        return error
    }

    /// The entries of the next downloads, until `count` entries arrived (downloads may carry several).
    func nextEntries(_ count: Int) async throws -> [DownloadEntry] {
        var entries: [DownloadEntry] = []
        while entries.count < count { entries += try await nextDownload().entries }
        return entries
    }

    /// Binds and returns the downloads of the backlog, up to the one with `remainingBytes == 0`, without the
    /// first one's `historyID` (a random number; `ClientResetTests.historyID` checks it).
    func bind(
        _ sessionID: UInt32 = 1,
        partition: String = "p",
        clientFileID: UInt64,
        downloadedVersion: UInt64 = 0
    ) async throws -> [Download] {
        send(
            .bind(
                Bind(
                    sessionID: sessionID,
                    partition: partition,
                    clientFileID: clientFileID,
                    downloadedVersion: downloadedVersion
                )
            )
        )
        var downloads: [Download] = []
        repeat {
            var download = try await nextDownload()
            download.historyID = nil
            downloads.append(download)
        } while downloads.last!.remainingBytes > 0
        return downloads
    }

    /// Uploads `data` as the changesets numbered from `firstVersion`.
    func upload(_ sessionID: UInt32 = 1, from firstVersion: UInt64, _ data: [[UInt8]]) {
        let changesets = data.enumerated().map { offset, bytes in
            UploadChangeset(clientVersion: firstVersion + UInt64(offset), data: bytes)
        }
        send(.upload(Upload(sessionID: sessionID, changesets: changesets)))
    }

    /// Pings and requires that the next message is the pong: proves nothing else was sent before it.
    func expectNothingPending(id: UInt64 = 99) async throws {
        send(.ping(id: id))
        let answer = try await next()
        #expect(answer == .pong(id: id))
    }

    /// Requires that the next event is `.closed(expected)`.
    func expectClosed(_ expected: SyncTransportError?) async throws {
        let event = try await nextEvent()
        #expect(event == .closed(expected))
    }

    /// Waits until the connection's events finished.
    func waitForEnd() async throws {
        try await waitUntil("the connection to end") { await inbox.isFinished }
    }

    func close() { connection.close() }
}

/// A test client saw an event it did not expect.
struct UnexpectedEvent: Error {
    let event: SyncTransportEvent
}
