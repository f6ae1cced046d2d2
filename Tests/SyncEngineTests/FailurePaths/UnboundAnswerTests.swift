import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

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
