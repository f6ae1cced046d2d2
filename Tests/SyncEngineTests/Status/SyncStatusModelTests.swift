import Foundation
import Observation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

/// Whether an observation's `onChange` fired (it may fire on any thread; here on the main actor).
final class Fired: Sendable {
    private let count = Locked(0)
    func fire() { count.withLock { $0 += 1 } }
    var times: Int { count.withLock { $0 } }
}

/// Tracks `read` on the main actor: the returned counter counts `onChange` calls (at most one per tracking).
@MainActor
func track(_ read: @escaping @MainActor () -> Void) -> Fired {
    let fired = Fired()
    withObservationTracking {
        read()
    } onChange: {
        fired.fire()
    }
    return fired
}

/// Polls `condition` on the main actor until it holds (sleeping between polls, so the main queue runs),
/// failing after the suite's deadline.
@MainActor
func eventuallyOnMain(_ what: String, _ condition: @MainActor () -> Bool) async throws {
    let limit = Duration.milliseconds(Int(defaultWaitSeconds * BuildFlavor.deadlineScale * 1000))
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    if condition() { return }
    throw WaitTimedOut(what: what, limit: limit)
}

/// The model is `@MainActor`: each test's body runs there (a `@MainActor` function the test awaits).
@Suite("SyncStatusModel", .timeLimit(.minutes(5)))
struct SyncStatusModelTests {
    private static let offline = SyncStatus(
        connection: .disconnected, activity: .offline, pending: .none, lastSyncedAt: nil,
        offlineReason: .suspended, lastError: nil)
    private var offline: SyncStatus { Self.offline }

    private func connected(pending: PendingWork = .none) -> SyncStatus {
        SyncStatus(
            connection: .connected, activity: .synced, pending: pending,
            lastSyncedAt: Date(timeIntervalSince1970: 1_800_000_000), offlineReason: nil, lastError: nil)
    }

    @Test("the model starts with the stream's current value, and a change reaches it on the executor")
    func mirrorsTheStream() async throws { try await mirrorsTheStreamOnMain() }

    @MainActor
    private func mirrorsTheStreamOnMain() async throws {
        let subject = CurrentValueSubject<SyncStatus, Never>(offline)
        let executor = TestExecutor()
        let model = SyncStatusModel(StateStream(subject), throttle: .milliseconds(500), on: executor)
        #expect(model.status == offline)
        #expect(model.connection == .disconnected && model.offlineReason == .suspended)
        executor.advance(by: .zero)  // the first (current) value: nothing visible changes
        let connection = track { _ = model.connection }
        let status = track { _ = model.status }
        executor.advance(by: .milliseconds(500))  // quiet again
        #expect(connection.times == 0 && status.times == 0)
        subject.send(connected())
        #expect(model.connection == .disconnected, "nothing changes before the executor delivers it")
        executor.advance(by: .zero)
        #expect(connection.times == 1 && status.times == 1)
        #expect(model.status == connected())
        #expect(model.connection == .connected && model.activity == .synced && model.offlineReason == nil)
        #expect(model.lastSyncedAt == Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test("onChange fires for what changed, not for what a view read that stayed the same")
    func onlyVisibleChanges() async throws { try await onlyVisibleChangesOnMain() }

    @MainActor
    private func onlyVisibleChangesOnMain() async throws {
        let subject = CurrentValueSubject<SyncStatus, Never>(connected())
        let executor = TestExecutor()
        let model = SyncStatusModel(StateStream(subject), throttle: .milliseconds(100), on: executor)
        executor.advance(by: .milliseconds(100))
        let connection = track { _ = model.connection }
        let activity = track { _ = model.activity }
        let pending = track { _ = model.pending }
        subject.send(connected(pending: PendingWork(uploadChangesets: 1, uploadBytes: 10, downloadBytes: 0)))
        executor.advance(by: .milliseconds(100))
        #expect(model.pending.uploadChangesets == 1)
        #expect(pending.times == 1)
        #expect(connection.times == 0, "the connection did not change")
        #expect(activity.times == 0, "the activity did not change")
        // The same snapshot again (a source that repeats itself): nothing fires at all.
        let status = track { _ = model.status }
        subject.send(subject.value)
        executor.advance(by: .milliseconds(100))
        #expect(status.times == 0)
    }

    @Test("throttled for UI: a burst inside one window is one update, with the newest value, at the window's end")
    func throttled() async throws { try await throttledOnMain() }

    @MainActor
    private func throttledOnMain() async throws {
        let subject = CurrentValueSubject<SyncStatus, Never>(offline)
        let executor = TestExecutor()
        let model = SyncStatusModel(StateStream(subject), throttle: .milliseconds(250), on: executor)
        executor.advance(by: .zero)  // the current value opens a window
        let status = track { _ = model.status }
        for count in 1...5 {
            subject.send(connected(pending: PendingWork(uploadChangesets: count, uploadBytes: count, downloadBytes: 0)))
        }
        executor.advance(by: .milliseconds(249))
        #expect(status.times == 0, "held until the window ends")
        #expect(model.status == offline)
        executor.advance(by: .milliseconds(1))
        #expect(status.times == 1)
        #expect(model.pending.uploadChangesets == 5, "the newest value of the burst")
        let after = track { _ = model.status }
        executor.advance(by: .seconds(1))
        #expect(after.times == 0, "one update for the burst, nothing more")
    }

    @Test("a model let go of is released: its subscription holds it weakly (no retain cycle)")
    func releases() async throws { try await releasesOnMain() }

    @MainActor
    private func releasesOnMain() async throws {
        let subject = CurrentValueSubject<SyncStatus, Never>(offline)
        let executor = TestExecutor()
        weak var weakModel: SyncStatusModel?
        do {
            let model = SyncStatusModel(StateStream(subject), throttle: .milliseconds(100), on: executor)
            weakModel = model
            executor.advance(by: .zero)
        }
        #expect(weakModel == nil)
        subject.send(connected())
        executor.advance(by: .seconds(1))  // nothing is delivered to a model that is gone
    }

    @Test("from a session's status, on the main queue by default: resuming shows connected, not suspended")
    func sessionOnTheMainActor() async throws { try await sessionOnTheMainActorOnMain() }

    @MainActor
    private func sessionOnTheMainActorOnMain() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let model = SyncStatusModel(session.status)
        #expect(model.offlineReason == .suspended)
        let connection = track { _ = model.connection }
        session.resume()
        try await eventuallyOnMain("the model shows the connection") { model.connection == .connected }
        #expect(connection.times == 1)
        #expect(model.offlineReason == nil)
        try await fixture.app.close()
    }

    @Test("from a user's status and an app's status too")
    func userAndApp() async throws { try await userAndAppOnMain() }

    @MainActor
    private func userAndAppOnMain() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let executor = TestExecutor()
        let userModel = SyncStatusModel(user.status, throttle: .milliseconds(100), on: executor)
        let appModel = SyncStatusModel(fixture.app.status, throttle: .milliseconds(100), on: executor)
        let session = try await user.openSession(partition: "p", suspended: true)
        try await session.write(payload(1, count: 10))
        try await eventuallyOnMain("both show the pending write") {
            executor.advance(by: .milliseconds(100))
            return userModel.pending.uploadChangesets == 1 && appModel.pending.uploadBytes == 10
        }
        try await fixture.app.close()
    }
}
