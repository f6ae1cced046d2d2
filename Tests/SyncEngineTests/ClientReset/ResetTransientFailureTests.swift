import Foundation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A client reset that cannot write its new store (a full disk, an I/O error) fails transiently: the
/// error is reported, the old store stays, and the session asks the server again after its backoff and
/// resets once the disk has room — never a session broken for good, never a write lost (found by the
/// simulation: all-faults seeds 7, 16, 20, 31, 190).
@Suite("Client reset transient failures", .timeLimit(.minutes(5)))
struct ResetTransientFailureTests {
    @Test("ENOSPC while a client reset writes its new store: reported, retried after the backoff, nothing lost")
    func enospcDuringResetIsTransient() async throws {
        let forgotten = try await ForgottenClientFileFixture.start()
        defer { forgotten.remove() }
        let (session, fixture, fileSystem) = (forgotten.session, forgotten.engine, forgotten.fileSystem)
        try await session.write(payload(2))
        let previous = await session.engine.clientFileIDForTests
        forgotten.clock.advance(days: 31)
        // The new store's header is its first write: the disk is full then, and has room afterwards.
        fileSystem.failNextWrite(of: ".reset-p.synclog", with: ENOSPC)
        session.resume()
        try await eventually("the failed reset is reported") {
            fixture.errors.values.contains {
                if case .storageFailure = $0.error { true } else { false }
            }
        }
        #expect(session.state.value != .invalid)
        #expect(await session.engine.clientFileIDForTests == previous)
        // A write meanwhile goes to the old store, and is recovered by the reset that follows.
        try await session.write(payload(3))
        // The retry waits for the backoff (virtual time), then the server asks for the reset again.
        try await forgotten.resetDone()
        try await session.wait(for: .upload)
        #expect(session.state.value == .active)
        #expect(await session.engine.clientFileIDForTests != previous)
        #expect(try await fixture.serverLog() == [Array(payload(1)), Array(payload(2)), Array(payload(3))])
        try await fixture.app.close()
    }

    @Test(
        "a write that fails (ENOSPC) while a client reset waits for the writes queued before it: the reset is retried, not dropped"
    )
    func failedFlushBeforeTheResetIsRetried() async throws {
        let forgotten = try await ForgottenClientFileFixture.start()
        defer { forgotten.remove() }
        let (session, fixture, fileSystem) = (forgotten.session, forgotten.engine, forgotten.fileSystem)
        forgotten.clock.advance(days: 31)
        // A batch in flight (its fsync held), and a write queued behind it whose batch will fail.
        let gate = fileSystem.hold(.sync, of: "p.synclog")
        let second = Task { try await session.write(payload(2)) }
        try await eventually("the fsync held") { gate.isBlocked }
        let third = Task { try await session.write(payload(3)) }
        try await eventually("the third write queued") { await session.engine.pendingRecordCount == 1 }
        fileSystem.failNextWrite(of: "p.synclog", with: ENOSPC)
        session.resume()
        // The server refuses the forgotten client file; the reset waits for the queued writes first.
        try await eventually("the reset started") { await session.engine.isResetting }
        gate.release()
        _ = try await second.value
        await #expect(throws: SyncError.self) { try await third.value }
        try await forgotten.resetDone()
        try await session.wait(for: .upload)
        #expect(session.state.value == .active)
        #expect(try await fixture.serverLog() == [Array(payload(1)), Array(payload(2))])
        try await fixture.app.close()
    }

    @Test(
        "a copy's write under a client version the server holds with other bytes is recovered even when the reset that noticed it fails (ENOSPC) and the server forgets the client file before the retry (simulation seed 8062)"
    )
    func divergedVersionOutlivesAFailedReset() async throws {
        let diverged = try await DivergedCopyWithAFailedReset.start()
        defer { diverged.remove() }
        let (fixture, session, recorder) = (diverged.fixture, diverged.session, diverged.recorder)
        let token = recorder.watch(session)
        defer { token.invalidate() }
        fixture.transport.faults.dropUploads = false
        // Before the retry, the server forgets the client file: it then answers clientExpired, and counts
        // client versions 1 and 2 (the original's) as integrated.
        try await serverNoticed(diverged.server, connections: 0)
        diverged.clock.advance(days: 31)
        try await eventually("the retried reset done") {
            fixture.timers.advance(by: .milliseconds(500))
            return recorder.events.contains {
                if case .didReset = $0 { true } else { false }
            }
        }
        try await session.wait(for: .upload)
        #expect(
            try await fixture.serverLog() == [1, 2, 22].map { Array(payload(UInt8($0))) },
            "the copy's write 22 must reach the server")
        try await fixture.app.close()
    }

    @Test(
        "the version a copy diverged at is durable: the app closes after the reset that noticed it failed, the server forgets the client file, and the relaunched app still recovers the copy's write"
    )
    func divergedVersionOutlivesARelaunch() async throws {
        let diverged = try await DivergedCopyWithAFailedReset.start()
        defer { diverged.remove() }
        // The app stops before the retry; the server forgets the client file while it is away.
        try await diverged.fixture.app.close()
        try await serverNoticed(diverged.server, connections: 0)
        diverged.clock.advance(days: 31)
        let relaunched = try await EngineFixture(
            server: diverged.server, directory: diverged.copied.copy,
            configure: { $0.clientResetMode = .recoverUnsyncedChanges })
        let session = try await relaunched.open()
        let recorder = ResetRecorder()
        let token = recorder.watch(session)
        defer { token.invalidate() }
        try await eventually("the relaunched session reset") {
            recorder.events.contains {
                if case .didReset = $0 { true } else { false }
            }
        }
        try await session.wait(for: .upload)
        #expect(
            try await relaunched.serverLog() == [1, 2, 22].map { Array(payload(UInt8($0))) },
            "the copy's write 22 must reach the server")
        try await relaunched.app.close()
    }
}

/// A copied client store whose write (22, client version 2) the server never got, while the original wrote
/// its own client version 2 (other bytes): the server's acknowledgement of the original's version 2 made the
/// copy's session start a recovering reset, which failed (ENOSPC writing its new store) and waits to retry.
/// The server forgets client files unseen for 30 days on `clock`; uploads from the copy are still dropped.
private struct DivergedCopyWithAFailedReset {
    let clock: ServerClock
    let server: SyncServer
    let copied: CopiedClientStore
    let fixture: EngineFixture
    let session: SyncSession
    let recorder = ResetRecorder()

    static func start() async throws -> DivergedCopyWithAFailedReset {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let copied = try await CopiedClientStore.start(server: server)
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(
            server: server, directory: copied.copy, fileSystem: fileSystem,
            configure: { $0.clientResetMode = .recoverUnsyncedChanges })
        let session = try await fixture.open()
        try await session.wait(for: .download)
        // The copy writes its client version 2; the upload is lost in transit.
        fixture.transport.faults.dropUploads = true
        try await session.write(payload(22))
        // The reset that the diverged acknowledgement starts cannot write its new store (a full disk).
        fileSystem.failNextWrite(of: ".reset-p.synclog", with: ENOSPC)
        // The original writes its client version 2 (other bytes); the server acknowledges it to the copy too.
        let app = makeApp(server: server.endpoint, directory: copied.original.url)
        let original = try await app.login(.anonymous).openSession(partition: "p")
        try await original.write(payload(2))
        try await original.wait(for: .upload)
        try await app.close()
        try await eventually("the failed reset is reported") {
            fixture.errors.values.contains {
                if case .storageFailure = $0.error { true } else { false }
            }
        }
        return DivergedCopyWithAFailedReset(
            clock: clock, server: server, copied: copied, fixture: fixture, session: session)
    }

    func remove() { copied.remove() }
}
