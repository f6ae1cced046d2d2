import Foundation
import SyncServer
import SyncStreams
import TestSupport

@testable import SyncEngine

/// A session whose client file the server is about to forget: an app (`EngineFixture`, its file system a
/// `ControlledFileSystem`, `.recoverUnsyncedChanges`) on a server that forgets client files unseen for 30
/// days (`forgetfulServer` on `clock`), its client resets recorded by `recorder`. `start()` writes payload 1
/// and waits for its acknowledgement, then suspends the session and waits until the server noticed the
/// connection's end: from then on, `clock.advance(days: 31)` makes the server ask for a client reset when
/// the session resumes.
struct ForgottenClientFileFixture {
    let clock: ServerClock
    let server: SyncServer
    let fileSystem: ControlledFileSystem
    let recorder: ResetRecorder
    let engine: EngineFixture
    let session: SyncSession
    private let token: SubscriptionToken

    static func start() async throws -> ForgottenClientFileFixture {
        let clock = ServerClock()
        let server = try await forgetfulServer(clock)
        let fileSystem = ControlledFileSystem()
        let recorder = ResetRecorder()
        let engine = try await EngineFixture(
            server: server, fileSystem: fileSystem, configure: { $0.clientResetMode = .recoverUnsyncedChanges })
        let session: SyncSession
        do {
            session = try await engine.open()
        } catch {
            engine.directory.remove()
            throw error
        }
        let fixture = ForgottenClientFileFixture(
            clock: clock, server: server, fileSystem: fileSystem, recorder: recorder, engine: engine,
            session: session, token: recorder.watch(session))
        do {
            try await session.write(payload(1))
            try await session.wait(for: .upload)
            session.suspend()
            try await serverNoticed(server, connections: 0)
        } catch {
            fixture.remove()
            throw error
        }
        return fixture
    }

    /// Waits until the recorder saw `.didReset`, moving the engine's timers on by 500 ms between checks
    /// (a retried reset waits for its backoff in virtual time).
    func resetDone() async throws {
        try await eventually("the reset done") {
            engine.timers.advance(by: .milliseconds(500))
            return recorder.events.contains {
                if case .didReset = $0 { true } else { false }
            }
        }
    }

    /// Stops recording and removes the app's directory (after `engine.app.close()`, or when a test fails).
    func remove() {
        token.invalidate()
        engine.directory.remove()
    }
}
