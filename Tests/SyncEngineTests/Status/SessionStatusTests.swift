import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// A wall clock the test sets, for `SyncStatus`'s dates.
final class StatusClock: Sendable {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    private let date = Locked(StatusClock.start)

    func set(_ new: Date) { date.withLock { $0 = new } }
    var now: Date { date.withLock { $0 } }
    var read: @Sendable () -> Date { { [date] in date.withLock { $0 } } }
}

@Suite("Session status", .timeLimit(.minutes(5)))
struct SessionStatusTests {
    private func fixture(
        clock: StatusClock, directory: TemporaryDirectory = TemporaryDirectory(), server: SyncServer? = nil,
        faults: FaultInjectingTransport.Faults = .init()
    ) async throws -> EngineFixture {
        try await EngineFixture(server: server, faults: faults, directory: directory) { $0.wallClock = clock.read }
    }

    @Test("a new suspended session: disconnected, offline because suspended, nothing pending, never synced")
    func initialStatus() async throws {
        let clock = StatusClock()
        let fixture = try await fixture(clock: clock)
        defer { fixture.directory.remove() }
        let session = try await fixture.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let expected = SyncStatus(
            connection: .disconnected, activity: .offline,
            pending: PendingWork(uploadChangesets: 0, uploadBytes: 0, downloadBytes: nil),
            lastSyncedAt: nil, offlineReason: .suspended, lastError: nil)
        #expect(session.status.value == expected)
        let seen = Collected(session.status)
        #expect(seen.values == [expected], "the current value at once on subscribe")
        session.resume()
        try await eventually("connected and synced") {
            session.status.value.connection == .connected && session.status.value.activity == .synced
        }
        #expect(session.status.value.offlineReason == nil)
        #expect(session.status.value.lastSyncedAt == clock.now)
        #expect(session.status.value.pending == PendingWork(uploadChangesets: 0, uploadBytes: 0, downloadBytes: 0))
        try await eventually("the subscriber heard it") { seen.values.last == session.status.value }
    }

    @Test("pending upload counts grow with offline writes and drop to zero once acknowledged")
    func pendingUploads() async throws {
        let clock = StatusClock()
        let fixture = try await fixture(clock: clock)
        defer { fixture.directory.remove() }
        let session = try await fixture.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let seen = Collected(session.status)
        for size in [10, 20, 30] { try await session.write(Data(repeating: 1, count: size)) }
        #expect(session.status.value.pending == PendingWork(uploadChangesets: 3, uploadBytes: 60, downloadBytes: nil))
        #expect(session.status.value.offlineReason == .suspended)
        try await eventually("the subscriber heard the counts") { seen.values.last?.pendingUploadBytes == 60 }
        #expect(session.status.value.lastSyncedAt == nil, "written but never synced")
        session.resume()
        try await session.wait(for: .upload)
        try await eventually("nothing pending") {
            session.status.value.pendingUploadChangesets == 0 && session.status.value.pendingUploadBytes == 0
        }
        try await eventually("synced") { session.status.value.lastSyncedAt == clock.now }
    }

    @Test("relaunch: pending counts and lastSyncedAt come from the store, before connecting")
    func relaunch() async throws {
        let clock = StatusClock()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let server = try await SyncServer.embedded()
        let first = try await fixture(clock: clock, directory: directory, server: server)
        let session = try await first.open()
        try await session.write(Data(repeating: 7, count: 100))
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
        let synced = clock.now
        try await eventually("synced at the first time") { session.status.value.lastSyncedAt == synced }
        session.suspend()
        for size in [5, 6] { try await session.write(Data(repeating: 2, count: size)) }
        clock.set(synced.addingTimeInterval(3_600))
        try await first.app.close()

        let second = try await fixture(clock: clock, directory: directory, server: server)
        let reopened = try await second.app.login(.anonymous).openSession(partition: "p", suspended: true)
        let status = reopened.status.value
        #expect(status.connection == .disconnected)
        #expect(status.pending == PendingWork(uploadChangesets: 2, uploadBytes: 11, downloadBytes: nil))
        #expect(status.lastSyncedAt == synced, "the time of the last full sync, read from the store")
        #expect(status.offlineReason == .suspended)
        #expect(Collected(reopened.status).values == [status])
        try await second.app.close()
    }

    @Test("deleteLocalFiles forgets lastSyncedAt and the pending counts")
    func deleteLocalFilesResets() async throws {
        let clock = StatusClock()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let server = try await SyncServer.embedded()
        let first = try await fixture(clock: clock, directory: directory, server: server)
        let session = try await first.open()
        try await session.wait(for: .download)
        try await eventually("synced") { session.status.value.lastSyncedAt == clock.now }
        session.suspend()
        try await session.write(Data(repeating: 3, count: 9))
        try await first.app.close()

        let second = try await fixture(clock: clock, directory: directory, server: server)
        // Before the deletion the store has both: the deletion is what forgets them.
        let before = try await second.app.login(.anonymous).openSession(partition: "p", suspended: true)
        #expect(before.status.value.lastSyncedAt == StatusClock.start)
        #expect(before.status.value.pendingUploadChangesets == 1)
        try await second.app.login(.anonymous).logOut()
        let user = try await second.app.login(.anonymous)
        try await second.app.deleteLocalFiles(for: user, partition: "p")
        let reopened = try await user.openSession(partition: "p", suspended: true)
        #expect(reopened.status.value.lastSyncedAt == nil)
        #expect(reopened.status.value.pending == .none)
        try await second.app.close()
    }

    @Test("waiting to reconnect: the next attempt's time and the last error; both cleared on the next success")
    func waitingToReconnect() async throws {
        let clock = StatusClock()
        let fixture = try await fixture(clock: clock, faults: .init(refuse: true))
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let error = SyncError.connectionFailed("\(SyncTransportError.refused("refused by the test"))")
        try await eventually("waiting 1 s") { fixture.timers.nextDueTime == fixture.timers.now + .seconds(1) }
        try await eventually("the status says why") {
            session.status.value.offlineReason
                == .waitingToReconnect(next: StatusClock.start.addingTimeInterval(1), lastError: error)
        }
        #expect(session.status.value.lastError == error)
        #expect(session.status.value.connection == .disconnected)
        // The second failure: 2 s from the (virtual and wall) time of the failure.
        clock.set(StatusClock.start.addingTimeInterval(1))
        fixture.timers.advance(by: .seconds(1))
        try await eventually("next at +3 s") {
            session.status.value.offlineReason
                == .waitingToReconnect(next: StatusClock.start.addingTimeInterval(3), lastError: error)
        }
        fixture.transport.faults = .init()
        fixture.timers.advance(by: .seconds(2))
        try await eventually("connected") { session.status.value.connection == .connected }
        try await eventually("synced") { session.status.value.activity == .synced }
        #expect(session.status.value.offlineReason == nil)
        #expect(session.status.value.lastError == nil, "cleared on the next success")
    }

    @Test("a refused credential: offline because the credential was refused, with the error")
    func credentialRefused() async throws {
        let clock = StatusClock()
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys(["good": ["a"]])))
        let fixture = try await fixture(clock: clock, server: server)
        defer { fixture.directory.remove() }
        let session = try await fixture.open("a", credentials: .apiKey("bad"))
        try await eventually("refused") { session.status.value.offlineReason == .credentialRefused }
        guard case .authenticationFailed? = session.status.value.lastError else {
            Issue.record("lastError: \(String(describing: session.status.value.lastError))")
            return
        }
    }

    @Test("closing the app: a final .closed snapshot, then the stream finishes")
    func closed() async throws {
        let clock = StatusClock()
        let fixture = try await fixture(clock: clock)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        let seen = Collected(session.status)
        try await fixture.app.close()
        try await eventually("finished") { seen.isFinished }
        #expect(seen.values.last?.offlineReason == .closed)
        #expect(seen.values.last?.connection == .disconnected)
        #expect(session.status.value.offlineReason == .closed)
    }

    @Test("a large upload makes a bounded number of status events, not one per byte or message")
    func boundedEvents() async throws {
        let clock = StatusClock()
        let fixture = try await fixture(clock: clock)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await session.wait(for: .download)
        let seen = Collected(session.status)
        let changesets = 8
        let size = 512 * 1024
        for index in 0..<changesets { try await session.write(Data(repeating: UInt8(index), count: size)) }
        try await session.wait(for: .upload)
        try await eventually("synced again") {
            seen.values.last?.activity == .synced && seen.values.last?.pendingUploadChangesets == 0
        }
        // Each durable write and each acknowledgement batch may show new counts: at most a few per
        // changeset, however many bytes (4 MiB here) or messages they take.
        #expect(seen.values.count <= 3 * changesets + 4, "\(seen.values.count) events")
        // Snapshots are never repeated.
        for (previous, next) in zip(seen.values, seen.values.dropFirst()) { #expect(previous != next) }
    }

    @Test("client reset: offline because of the reset while it runs, lastSyncedAt forgotten, then set by the next sync")
    func clientReset() async throws {
        let clock = StatusClock()
        let serverClock = ServerClock()
        let server = try await forgetfulServer(serverClock)
        let a = try await fixture(clock: clock, server: server)
        let b = try await fixture(clock: clock, server: server)
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let sessionA = try await a.open()
        let sessionB = try await b.open()
        try await sessionA.write(payload(1))
        try await sessionA.wait(for: .upload)
        try await sessionA.wait(for: .download)
        let firstSync = clock.now
        try await eventually("A synced") { sessionA.status.value.lastSyncedAt == firstSync }
        sessionA.suspend()
        try await serverNoticed(server, connections: 1)
        try await sessionA.write(payload(2))
        serverClock.advance(days: 31)
        try await sessionB.write(payload(11))
        try await sessionB.wait(for: .upload)
        let seen = Collected(sessionA.status)
        let secondSync = firstSync.addingTimeInterval(86_400)
        clock.set(secondSync)
        sessionA.resume()
        try await eventually("A synced again after the reset") {
            sessionA.status.value.lastSyncedAt == secondSync && sessionA.status.value.pendingUploadChangesets == 0
        }
        let values = seen.values
        let resetting = values.firstIndex { $0.offlineReason == .clientReset }
        let forgotten = values.firstIndex { $0.lastSyncedAt == nil }
        #expect(resetting != nil, "a snapshot said a client reset runs: \(values)")
        #expect(forgotten != nil, "a snapshot had forgotten the old store's time: \(values)")
        if let resetting, let forgotten { #expect(resetting < forgotten) }
        #expect(values.last?.offlineReason == nil)
    }

    /// The switch of docs/Monitoring.md's example, word for word, returning the line instead of printing it.
    private func describe(_ status: SyncStatus) -> String {
        switch status.offlineReason {
        case nil:
            return status.activity == .synced ? "synced" : "syncing \(status.pending.uploadChangesets) changes"
        case .suspended?:
            return "paused, \(status.pending.uploadChangesets) changes waiting"
        case .waitingToReconnect(let next, let error)?:
            return "offline (\(error.map { "\($0)" } ?? "no network")), retrying at \(next)"
        case .credentialRefused?:
            return "sign in again"
        case .clientReset?:
            return "repairing local data…"
        case .closed?:
            return "closed"
        }
    }

    @Test("docs/Monitoring.md's example: paused with a change waiting, then synced, then closed")
    func monitoringExample() async throws {
        let fixture = try await fixture(clock: StatusClock())
        defer { fixture.directory.remove() }
        let session = try await fixture.app.login(.anonymous).openSession(partition: "p", suspended: true)
        try await session.write(Data([1]))
        #expect(describe(session.status.value) == "paused, 1 changes waiting")
        session.resume()
        try await session.wait(for: .upload)
        try await eventually("synced") { describe(session.status.value) == "synced" }
        try await fixture.app.close()
        #expect(describe(session.status.value) == "closed")
    }
}
