import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// After `close()` / `logOut()` every stream of a session finishes (issue 21, item 9): `for await` over
/// them ends instead of hanging, and a subscription made afterwards finishes at once.
@Suite("Session streams end", .timeLimit(.minutes(5)))
struct StreamsEndTests {
    /// Every stream of `session`, collected.
    private func streams(_ session: SyncSession) -> [(String, @Sendable () -> Bool)] {
        let state = Collected(session.state)
        let connection = Collected(session.connectionState)
        let upload = Collected(session.progress(for: .upload, mode: .reportIndefinitely))
        let download = Collected(session.progress(for: .download, mode: .reportIndefinitely))
        let outstanding = Collected(session.progress(for: .upload, mode: .forCurrentlyOutstandingWork))
        let changesets = Collected(session.changesets)
        return [
            ("state", { state.isFinished }), ("connectionState", { connection.isFinished }),
            ("upload progress", { upload.isFinished }), ("download progress", { download.isFinished }),
            ("outstanding upload", { outstanding.isFinished }), ("changesets", { changesets.isFinished }),
        ]
    }

    @Test("app.close(): state, connectionState, progress (both modes) and changesets finish; later subscriptions too")
    func closeFinishesEverything() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.write(payload(1))
        try await session.wait(for: .upload)
        session.suspend()
        try await session.write(payload(2))  // outstanding: the registration below has work to wait for
        let before = streams(session)
        try await fixture.app.close()
        for (name, isFinished) in before {
            try await eventually("\(name) finished") { isFinished() }
        }
        for (name, isFinished) in streams(session) {
            try await eventually("\(name), subscribed after close, finished") { isFinished() }
        }
    }

    @Test("logOut(): for await over state, connectionState and progress ends")
    func logOutEndsForAwait() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let session = try await user.openSession(partition: "p")
        try await session.write(payload(1))
        try await session.wait(for: .upload)
        let ended = Locked(0)
        let tasks = [
            Task {
                for await _ in session.state.values {}
                ended.withLock { $0 += 1 }
            },
            Task {
                for await _ in session.connectionState.values {}
                ended.withLock { $0 += 1 }
            },
            Task {
                for await _ in session.progress(for: .download, mode: .reportIndefinitely).values {}
                ended.withLock { $0 += 1 }
            },
        ]
        await user.logOut()
        try await eventually("every for-await ended") { ended.withLock { $0 } == 3 }
        for task in tasks { task.cancel() }
    }
}
