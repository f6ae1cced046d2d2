import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// The client trusts no server either, and keeps only what is in flight in memory.
@Suite("Client checks", .timeLimit(.minutes(5)))
struct ClientChecksTests {
    @Test(
        "a download that skips a server version makes the session invalid",
        arguments: [
            [DownloadEntry.changeset(serverVersion: 2, data: [1])],
            [DownloadEntry.changeset(serverVersion: 1, data: [1]), .changeset(serverVersion: 3, data: [3])],
        ])
    func badDownloadsAreFatal(entries: [DownloadEntry]) async throws {
        let server = ScriptedServer { bind in
            [.download(Download(sessionID: bind.sessionID, entries: entries, remainingBytes: 0))]
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let app = makeApp(server: .inProcess(server), directory: directory.url)
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("invalid") { session.state.value == .invalid }
        try await eventually("reported") { !errors.values.isEmpty }
        guard case .protocolViolation(_, isFatal: true) = errors.values.first?.error else {
            Issue.record("expected a fatal protocol violation, got \(errors.values.map(\.error))")
            return
        }
        #expect(errors.values.first?.session === session)
        #expect(Collected(session.changesets).values.isEmpty)  // nothing of the bad download was stored
        #expect(session.engine.notifier.current(.download) == nil)
    }

    /// An acknowledgement of a client version this store never wrote means another copy of its client file
    /// wrote it (a store restored from a backup taken before that write; simulation seeds 38, 175): a
    /// `historyLost` client reset, not a protocol violation (`CopiedStoreTests`). In `.manual` mode the reset
    /// is the app's: the session fails with `clientResetRequired`, and nothing of the download is stored.
    @Test(
        "an acknowledgement of a client version never written asks for a client reset: in .manual mode the session fails with clientResetRequired"
    )
    func acknowledgementOfAVersionNeverWrittenAsksForAReset() async throws {
        let server = ScriptedServer { bind in
            [
                .download(
                    Download(
                        sessionID: bind.sessionID, entries: [.acknowledged(serverVersion: 1, clientVersion: 1)],
                        remainingBytes: 0))
            ]
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let app = makeApp(
            server: .inProcess(server), directory: directory.url, configure: { $0.clientResetMode = .manual })
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("invalid") { session.state.value == .invalid }
        try await eventually("reported") { !errors.values.isEmpty }
        guard case .clientResetRequired = errors.values.first?.error else {
            Issue.record("expected clientResetRequired, got \(errors.values.map(\.error))")
            return
        }
        #expect(errors.values.first?.session === session)
        #expect(await session.engine.acknowledgedClientVersionForTests == 0)
        try await app.close()
    }

    @Test("writes wait while the group-commit queue is full: it never holds more than its bound and one write")
    func groupCommitQueueIsBounded() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bound = 64 * 1024
        let app = SyncApp(
            configuration: .init(
                server: server.endpoint, directory: directory.url, timerExecutor: TestExecutor(),
                callbackExecutor: ImmediateExecutor(), pendingWriteBytes: bound))
        let session = try await app.login(.anonymous).openSession(partition: "p")
        let changeset = Data(repeating: 7, count: 16 * 1024)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 { group.addTask { try await session.write(changeset) } }
            try await group.waitForAll()
        }
        #expect(await session.engine.peakPendingBytes <= bound + changeset.count)
        #expect(await session.engine.peakPendingBytes >= bound)  // the queue did fill: the writes had to wait
        try await session.wait(for: .upload)
        #expect(try await server.changesets(in: "p").count == 64)
        try await app.close()
    }

    @Test("a late changesets subscriber reads the bytes back from the store file, not from memory")
    func replayReadsTheFile() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let marker = Array("FIND-ME-IN-THE-FILE".utf8)
        try await session.write(Data(marker))
        try await session.wait(for: .upload)
        // Change the changeset's bytes on disk behind the engine's back: a record this process appended is
        // read back with its header checked but its payload not checksummed a second time (it was, as it was
        // written), so the subscriber gets what the file holds now — not the bytes the engine had in memory.
        var changed = marker
        changed[0] ^= 0xFF
        try damage(fixture.directory, replacing: marker, with: changed)
        let seen = Collected(session.changesets)
        try await eventually("the changeset is replayed") { !seen.values.isEmpty }
        #expect(seen.values.first?.data == Data(changed))
        #expect(fixture.errors.values.isEmpty)
    }

    @Test("a changeset on disk when the store opened is checked when it is read back: damage is storeCorrupted")
    func replayChecksWhatWasOnDisk() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let server = try await SyncServer.embedded()
        let marker = Array("FIND-ME-IN-THE-FILE".utf8)
        let first = try await EngineFixture(server: server, directory: directory)
        try await first.open().write(Data(marker))
        try await first.open().wait(for: .upload)
        try await first.app.close()
        // Opened again (the scan checks every record), then damaged behind the engine's back.
        let fixture = try await EngineFixture(server: server, directory: directory)
        let session = try await fixture.open()
        var changed = marker
        changed[0] ^= 0xFF
        try damage(directory, replacing: marker, with: changed)
        let seen = Collected(session.changesets)
        try await eventually("the damage is reported") { !fixture.errors.values.isEmpty }
        #expect(seen.values.isEmpty)  // never the damaged bytes
        guard case .storeCorrupted = fixture.errors.values.first?.error else {
            Issue.record("expected storeCorrupted, got \(fixture.errors.values.map(\.error))")
            return
        }
        #expect(fixture.errors.values.first?.session === session)
        try await fixture.app.close()
    }

    /// Replaces the first occurrence of `bytes` in the anonymous user's store of partition "p" in place.
    private func damage(_ directory: TemporaryDirectory, replacing bytes: [UInt8], with replacement: [UInt8]) throws {
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        var contents = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let at = try #require(contents.firstRange(of: bytes)).lowerBound
        contents.replaceSubrange(at..<(at + bytes.count), with: replacement)
        try Data(contents).write(to: URL(fileURLWithPath: path))
    }
}

/// A server in this process that welcomes every client, answers each `bind` with `script(bind)`, and
/// answers pings and marks.
final class ScriptedServer: SyncConnectionAcceptor {
    private let script: @Sendable (Bind) -> [ServerMessage]

    init(_ script: @escaping @Sendable (Bind) -> [ServerMessage]) { self.script = script }

    func accept(_ connection: any SyncServerConnection) -> Bool {
        let script = script
        Task {
            for await message in connection.incoming {
                switch message {
                case .hello:
                    connection.send(
                        .welcome(
                            protocolVersion: WireProtocol.version,
                            maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize)))
                case .bind(let bind): for answer in script(bind) { connection.send(answer) }
                case .ping(let id): connection.send(.pong(id: id))
                case .mark(let sessionID, let id): connection.send(.marked(sessionID: sessionID, id: id))
                case .upload, .unbind: break
                }
            }
        }
        return true
    }
}

@Suite("Torn writes", .timeLimit(.minutes(5)))
struct TornWriteTests {
    @Test(
        "a final write torn by a crash is cut when the session opens, and the bytes cut are reported with the session")
    func tornTailIsReported() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let app = makeApp(server: server.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(Data("kept".utf8))
            try await app.close()
        }
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data([50, 0, 0, 0, 1, 2, 3]))  // a record cut short by the crash
        handle.closeFile()

        let app = makeApp(server: server.endpoint, directory: directory.url)
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("reported") { !errors.values.isEmpty }
        #expect(errors.values.first?.error == .storeRepaired(path: path, discardedBytes: 7))
        #expect(errors.values.first?.session === session)
        try await session.wait(for: .upload)
        #expect(try await server.changesets(in: "p").map(\.data) == [Array("kept".utf8)])
    }
}
