import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// After the server ends a session with a session-level error, it answers the client's messages already
/// in flight for that session with `unknownSession` (issue 21 item 10): those answers are expected, not
/// protocol violations.
@Suite("Answers about an unbound session", .timeLimit(.minutes(5)))
struct UnboundAnswerTests {
    @Test(
        "after a session error, the server's unknownSession answers to uploads in flight are not reported: one error, the session rebinds and syncs"
    )
    func unknownSessionAfterSessionErrorIsNotReported() async throws {
        let server = FailingFirstUploadServer(inFlightAnswers: 3)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let timers = TestExecutor()
        let app = makeApp(server: .inProcess(server), directory: directory.url, timers: timers)
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        try await session.write(Data("one".utf8))
        try await eventually("the session error was reported") { !errors.values.isEmpty }
        // The rebind after the backoff; then the upload is stored.
        try await eventually("bound again") {
            timers.advance(by: .seconds(1))
            return server.binds >= 2
        }
        try await session.wait(for: .upload)
        #expect(server.stored == [Array("one".utf8)])
        #expect(session.state.value == .active)
        #expect(
            errors.values.map(\.error) == [.serverError("the store failed")],
            "\(errors.values.map(\.error))")
        try await app.close()
    }

    @Test("an unknownSession answer about a session the client holds bound is still a protocol violation")
    func unknownSessionForABoundSessionIsReported() async throws {
        let server = FailingFirstUploadServer(inFlightAnswers: 0, firstAnswer: .unknownSession)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let timers = TestExecutor()
        let app = makeApp(server: .inProcess(server), directory: directory.url, timers: timers)
        let errors = Collected(app.errors)
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await session.wait(for: .download)
        try await session.write(Data("one".utf8))
        try await eventually("reported") { !errors.values.isEmpty }
        #expect(errors.values.map(\.error) == [.protocolViolation("the store failed", isFatal: false)])
        try await app.close()
    }

    @Test(
        "an unbind after a local store failure, answered unknownSession because the server had already ended the binding itself, still lets the session bind again: the write is acknowledged"
    )
    func unbindAnsweredUnknownSessionStillRebinds() async throws {
        let store = SwitchableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(server: server, fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let session = try await fixture.openConnected()
        try await session.wait(for: .download)
        // From here the server's messages to the session are held in transit, released one by one.
        fixture.transport.faults.delayMessages = true
        let other = TemporaryDirectory()
        defer { other.remove() }
        let writer = try await makeApp(server: server.endpoint, directory: other.url)
            .login(.anonymous).openSession(partition: "p")
        try await writer.write(payload(1))
        try await writer.wait(for: .upload)
        try await eventually("the other's changeset held for the session") { fixture.transport.heldChangesetCount == 1 }
        // The session's upload fails in the server's store: the server ends the binding (its error held).
        await store.setFailsAppends(true)
        try await session.write(payload(2))
        try await eventually("the server's session error held") {
            fixture.transport.held.contains {
                if case .error(let error) = $0 { error.code == .internalError } else { false }
            }
        }
        await store.setFailsAppends(false)
        // The download arrives first and cannot be stored (ENOSPC): the client unbinds the session itself and
        // waits for the server's answer before binding again. The server holds no binding: unknownSession.
        fileSystem.failNextWrite(of: "p.synclog", with: ENOSPC)
        fixture.transport.releaseOne()
        try await eventually("the server answered the unbind with unknownSession") {
            fixture.transport.held.contains {
                if case .error(let error) = $0 { error.code == .unknownSession } else { false }
            }
        }
        fixture.transport.deliverDelayedMessages()
        // After the backoff (virtual time) the session binds again, and its write is acknowledged.
        try await eventually("the write acknowledged", limit: .seconds(20)) {
            fixture.timers.advance(by: .milliseconds(500))
            return session.pendingWrites.value.isEmpty
        }
        #expect(session.state.value == .active)
        #expect(try await fixture.serverLog() == [Array(payload(1)), Array(payload(2))])
        try await eventually("the other's changeset stored after all") {
            Collected(session.changesets).values.count == 2
        }
        try await fixture.app.close()
    }
}

/// A server store in memory whose appends fail while `failsAppends` (storing nothing).
actor SwitchableStore: PartitionStore {
    struct Failure: Error {}
    private var logs: [String: [StoredChangeset]] = [:]
    private var failsAppends = false

    func setFailsAppends(_ fails: Bool) { failsAppends = fails }

    func summaries(of partition: String) -> [StoredChangesetSummary] { (logs[partition] ?? []).map(\.summary) }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) -> [StoredChangeset] {
        (logs[partition] ?? []).filter { versions.contains($0.serverVersion) }
    }

    func append(_ changesets: [StoredChangeset], to partition: String) throws {
        if failsAppends { throw Failure() }
        logs[partition, default: []].append(contentsOf: changesets)
    }
}

/// A server in this process that answers the first upload like a front end whose store failed: a
/// session error (`firstAnswer`), then `inFlightAnswers` `unknownSession` answers (the uploads the client
/// had in flight reach a session the server no longer holds). Later binds and uploads succeed: every
/// upload is acknowledged with a download of its changesets.
final class FailingFirstUploadServer: SyncConnectionAcceptor, @unchecked Sendable {
    // @unchecked Sendable: the counters are used under `lock`; the rest is immutable.
    private let lock = NSLock()
    private var bindCount = 0
    private var failed = false
    private var storedData: [[UInt8]] = []
    private let inFlightAnswers: Int
    private let firstAnswer: ProtocolErrorCode

    init(inFlightAnswers: Int, firstAnswer: ProtocolErrorCode = .internalError) {
        self.inFlightAnswers = inFlightAnswers
        self.firstAnswer = firstAnswer
    }

    var binds: Int { lock.withLock { bindCount } }
    var stored: [[UInt8]] { lock.withLock { storedData } }

    func accept(_ connection: any SyncServerConnection) -> Bool {
        Task {
            for await message in connection.incoming {
                switch message {
                case .hello: connection.send(.welcome(protocolVersion: WireProtocol.version))
                case .bind(let bind):
                    lock.withLock { bindCount += 1 }
                    connection.send(.download(Download(sessionID: bind.sessionID, entries: [], remainingBytes: 0)))
                case .upload(let upload):
                    for answer in answers(to: upload) { connection.send(answer) }
                case .ping(let id): connection.send(.pong(id: id))
                case .mark(let sessionID, let id): connection.send(.marked(sessionID: sessionID, id: id))
                case .unbind(let sessionID): connection.send(.unbound(sessionID: sessionID))
                }
            }
        }
        return true
    }

    private func answers(to upload: Upload) -> [ServerMessage] {
        lock.withLock {
            if !failed {
                failed = true
                let error = ProtocolError(
                    sessionID: upload.sessionID, code: firstAnswer, message: "the store failed",
                    retryAfterMilliseconds: 500)
                let inFlight = (0..<inFlightAnswers).map { _ in
                    ServerMessage.error(
                        ProtocolError(
                            sessionID: upload.sessionID, code: .unknownSession,
                            message: "session \(upload.sessionID) is not bound"))
                }
                return [.error(error)] + inFlight
            }
            let first = UInt64(storedData.count) + 1
            storedData += upload.changesets.map(\.data)
            let entries = upload.changesets.enumerated().map { offset, changeset in
                DownloadEntry.acknowledged(
                    serverVersion: first + UInt64(offset), clientVersion: changeset.clientVersion)
            }
            return [.download(Download(sessionID: upload.sessionID, entries: entries, remainingBytes: 0))]
        }
    }
}
