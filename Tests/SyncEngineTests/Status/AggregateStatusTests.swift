import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

@Suite("User and app status", .timeLimit(.minutes(5)))
struct AggregateStatusTests {
    private func status(
        _ connection: ConnectionState, pending: PendingWork = .none, lastSyncedAt: Date? = nil,
        offlineReason: OfflineReason? = nil, lastError: SyncError? = nil
    ) -> SyncStatus {
        SyncStatus(
            connection: connection, activity: connection == .connected ? .synced : .offline, pending: pending,
            lastSyncedAt: lastSyncedAt, offlineReason: offlineReason, lastError: lastError)
    }

    @Test("combined: least connected, pending added, oldest lastSyncedAt, most severe reason, fatal error first")
    func combinedRules() {
        let early = Date(timeIntervalSince1970: 100)
        let late = Date(timeIntervalSince1970: 200)
        let a = status(
            .connected, pending: PendingWork(uploadChangesets: 1, uploadBytes: 10, downloadBytes: 5),
            lastSyncedAt: late)
        let b = status(
            .disconnected, pending: PendingWork(uploadChangesets: 2, uploadBytes: 20, downloadBytes: nil),
            lastSyncedAt: early, offlineReason: .suspended, lastError: .connectTimedOut)
        let combined = SyncStatus.combined([a, b])
        #expect(combined.connection == .disconnected)
        #expect(combined.pending == PendingWork(uploadChangesets: 3, uploadBytes: 30, downloadBytes: nil))
        #expect(combined.lastSyncedAt == early)
        #expect(combined.offlineReason == .suspended)
        #expect(combined.lastError == .connectTimedOut)
        #expect(combined.activity == .synced, "the online member is synced")

        let c = status(.connecting, pending: PendingWork(uploadChangesets: 0, uploadBytes: 0, downloadBytes: 7))
        #expect(SyncStatus.combined([a, c]).connection == .connecting)
        #expect(SyncStatus.combined([a, c]).pending.downloadBytes == 12)
        #expect(SyncStatus.combined([a, c]).lastSyncedAt == nil, "c was never synced")

        let soon = OfflineReason.waitingToReconnect(next: early, lastError: nil)
        let later = OfflineReason.waitingToReconnect(next: late, lastError: nil)
        let refused = status(.disconnected, offlineReason: .credentialRefused, lastError: .authenticationFailed("no"))
        let reasons: [OfflineReason] = [.closed, .suspended, later, soon, .clientReset]
        for count in 1...reasons.count {
            let members = reasons.prefix(count).map { status(.disconnected, offlineReason: $0) }
            #expect(SyncStatus.combined(members).offlineReason == reasons[count - 1], "the most severe of \(count)")
        }
        let withRefused = SyncStatus.combined([b, refused])
        #expect(withRefused.offlineReason == .credentialRefused)
        #expect(withRefused.lastError == .authenticationFailed("no"), "a fatal error comes first")
        #expect(SyncStatus.combined([]) == .empty)
    }

    @Test("user.status and app.status add up the sessions' pending work, even while offline")
    func pendingAddsUp() async throws {
        let clock = StatusClock()
        let fixture = try await EngineFixture(configure: { $0.wallClock = clock.read })
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let other = try await fixture.app.login(.apiKey("k"))
        let a = try await user.openSession(partition: "a", suspended: true)
        let b = try await user.openSession(partition: "b", suspended: true)
        let c = try await other.openSession(partition: "c", suspended: true)
        for size in [1, 2, 3] { try await a.write(Data(count: size)) }
        for size in [10, 20] { try await b.write(Data(count: size)) }
        try await c.write(Data(count: 100))
        try await eventually("the user's counts") {
            user.status.value.pending == PendingWork(uploadChangesets: 5, uploadBytes: 36, downloadBytes: nil)
        }
        #expect(user.status.value.offlineReason == .suspended)
        try await eventually("the app's counts") {
            fixture.app.status.value.pending == PendingWork(uploadChangesets: 6, uploadBytes: 136, downloadBytes: nil)
        }
        // One session online: the user is still offline (b is suspended) and never fully synced.
        a.resume()
        try await a.wait(for: .upload)
        try await eventually("a synced") { a.status.value.lastSyncedAt == clock.now }
        try await eventually("the user's counts drop") { user.status.value.pending.uploadChangesets == 2 }
        #expect(user.status.value.connection == .disconnected)
        #expect(user.status.value.lastSyncedAt == nil)
        let aSynced = clock.now
        clock.set(aSynced.addingTimeInterval(60))
        b.resume()
        try await b.wait(for: .upload)
        try await eventually("the user is synced, since the older of the two") {
            user.status.value.connection == .connected && user.status.value.lastSyncedAt == aSynced
                && user.status.value.offlineReason == nil && user.status.value.pending.uploadChangesets == 0
        }
    }

    @Test("logOut finishes user.status after a .closed snapshot; app.close() finishes app.status")
    func finishes() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        _ = try await user.openSession(partition: "a")
        let userSeen = Collected(user.status)
        let appSeen = Collected(fixture.app.status)
        await user.logOut()
        #expect(userSeen.isFinished)
        #expect(userSeen.values.last?.offlineReason == .closed)
        #expect(user.status.value.offlineReason == .closed)
        #expect(!appSeen.isFinished)
        try await fixture.app.close()
        #expect(appSeen.isFinished)
        #expect(fixture.app.status.value.offlineReason == .closed)
    }
}
