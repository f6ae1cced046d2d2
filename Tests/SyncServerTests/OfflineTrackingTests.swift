import Foundation
import SyncStorage
import SyncStreams
import TestSupport
import Testing

@testable import SyncServer
@testable import SyncWire

/// An in-memory store (kept across server instances, like files across restarts) whose client-file record
/// appends take a while (20 ms), and which refuses them once closed, as a closed file store
/// does: a record nobody waits for is lost when the store closes first.
private final class SlowRecordStore: PartitionStore {
    struct Closed: Error {}
    let inner = InMemoryPartitionStore()
    let isClosed = Locked(false)
    /// The client-file records appended, in order (the in-memory store keeps none).
    let records = Locked<[ClientFileRecord]>([])

    func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        await inner.summaries(of: partition)
    }
    func summaries(of partition: String, after version: UInt64) async throws -> [StoredChangesetSummary] {
        try await inner.summaries(of: partition, after: version)
    }
    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        await inner.read(versions, of: partition)
    }
    func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        await inner.append(changesets, to: partition)
    }
    func clientFileRecords(of partition: String) async throws -> [ClientFileRecord] {
        records.withLock { $0 }
    }
    func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) async throws {
        // Slow, as a record append with its fsync is: 20 ms (a loop of yields was as slow as the whole
        // cooperative pool's queue, over a minute under ThreadSanitizer with the suite running).
        try? await Task.sleep(for: .milliseconds(20))
        if isClosed.withLock({ $0 }) { throw Closed() }
        self.records.withLock { $0 += records }
    }
    func appendNotifications() -> AsyncStream<AppendNotification>? { nil }
    func unload(_ partition: String) async { await inner.unload(partition) }
}

/// "Last seen" for the maximum offline time is durable and bounded-stale: what the server learns when a
/// session ends is recorded before `stop()` returns, never left to a task nobody waits for.
@Suite(.timeLimit(.minutes(5)))
struct OfflineTrackingTests {
    private let thirtyDays: Duration = .seconds(30 * 86_400)

    @Test(
        "a client file bound until the server stops is recorded as seen before stop() returns: after a restart it is not forgotten"
    )
    func seenUntilStopIsDurable() async throws {
        let clock = TestClock()
        let store = SlowRecordStore()
        do {
            let server = try await SyncServer.embedded(
                configuration: .init(store: store, maximumOfflineTime: thirtyDays, clock: clock.read))
            let client = try await TestClient.welcomed(to: server)
            _ = try await client.bind(clientFileID: 1)
            clock.advance(days: 20)  // bound all along: seen until the stop
            await server.stop()
            store.isClosed.withLock { $0 = true }  // what a server process does next
        }
        let records = store.records.withLock { $0 }
        #expect(records.last == .seen(clientFileID: 1, at: clock.now), "\(records)")
        store.isClosed.withLock { $0 = false }
        clock.advance(days: 15)  // 35 days after the bind, 15 after it was last seen
        let server = try await SyncServer.embedded(
            configuration: .init(store: store, maximumOfflineTime: thirtyDays, clock: clock.read))
        let client = try await TestClient.welcomed(to: server)
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        if case .error(let error) = try await client.next() { Issue.record("the bind was refused: \(error)") }
        await server.stop()
    }

    @Test(
        "a client file bound and pinging is recorded as seen at most a record interval late, without a bind, upload or stop"
    )
    func pingsKeepTheRecordFresh() async throws {
        let clock = TestClock()
        let store = SlowRecordStore()
        let server = try await SyncServer.embedded(
            configuration: .init(store: store, maximumOfflineTime: thirtyDays, clock: clock.read))
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(clientFileID: 1)
        #expect(store.records.withLock { $0 } == [.seen(clientFileID: 1, at: clock.now)])
        clock.advance(days: 20)
        client.send(.ping(id: 7))
        #expect(try await client.next() == .pong(id: 7))
        try await waitUntil("a fresh seen record after the ping") {
            store.records.withLock { $0.last } == .seen(clientFileID: 1, at: clock.now)
        }
        // A crash now (no stop) would leave the client file seen 20 days after its bind, not at the bind.
        await server.stop()
    }
}

/// A monotonic clock the test sets: time since the server started, as `Configuration.uptime` reads it.
final class TestUptime: @unchecked Sendable {
    // @unchecked Sendable: `elapsed` is only touched under `lock`.
    private let lock = NSLock()
    private var elapsed: Duration = .zero

    func advance(days: Double) { advance(seconds: days * 86_400) }
    func advance(seconds: Double) { lock.withLock { elapsed += .milliseconds(Int64(seconds * 1_000)) } }
    var read: @Sendable () -> Duration { { self.lock.withLock { self.elapsed } } }
}

/// A wall clock that jumps while the server runs (set by hand, or by a bad NTP source) is not time offline:
/// the server measures offline time with its monotonic clock between readings.
@Suite(.timeLimit(.minutes(5)))
struct WallClockJumpTests {
    private let thirtyDays: Duration = .seconds(30 * 86_400)

    /// Binds `clientFileID` on a new connection and unbinds it again: the client file is seen now.
    private func visit(_ server: SyncServer, clientFileID: UInt64) async throws {
        let client = try await TestClient.welcomed(to: server)
        _ = try await client.bind(clientFileID: clientFileID)
        client.send(.unbind(sessionID: 1))
        #expect(try await client.next() == .unbound(sessionID: 1))
    }

    /// The error a bind of `clientFileID` gets, or `nil` when it is accepted.
    private func refusal(_ server: SyncServer, clientFileID: UInt64) async throws -> ProtocolError? {
        let client = try await TestClient.welcomed(to: server)
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: clientFileID, downloadedVersion: 0)))
        guard case .error(let error) = try await client.next() else { return nil }
        return error
    }

    @Test(
        "a wall clock set forward by 40 days does not expire a client file seen a moment before; one really offline longer than the maximum still is"
    )
    func forwardJumpIsNotOfflineTime() async throws {
        let clock = TestClock()
        let uptime = TestUptime()
        let server = try await SyncServer.embedded(
            configuration: .init(maximumOfflineTime: thirtyDays, clock: clock.read, uptime: uptime.read))
        try await visit(server, clientFileID: 2)
        clock.advance(days: 29)
        uptime.advance(days: 29)
        try await visit(server, clientFileID: 1)
        clock.advance(days: 40)  // the jump
        uptime.advance(seconds: 1)
        #expect(try await refusal(server, clientFileID: 1) == nil, "seen a second ago")
        clock.advance(days: 2)
        uptime.advance(days: 2)
        // Client file 2 has been offline 31 days and a second: forgotten. Client file 1: 2 days.
        #expect(try await refusal(server, clientFileID: 2)?.clientReset?.reason == .clientExpired)
        #expect(try await refusal(server, clientFileID: 1) == nil, "seen 2 days ago")
        await server.stop()
    }

    @Test("a wall clock set back by 40 days does not keep a client file offline longer than the maximum from expiring")
    func backwardJumpDoesNotExtendTheMaximum() async throws {
        let clock = TestClock()
        let uptime = TestUptime()
        let server = try await SyncServer.embedded(
            configuration: .init(maximumOfflineTime: thirtyDays, clock: clock.read, uptime: uptime.read))
        try await visit(server, clientFileID: 1)
        clock.advance(days: -40)  // the jump
        uptime.advance(seconds: 1)
        #expect(try await refusal(server, clientFileID: 2) == nil)
        clock.advance(days: 31)
        uptime.advance(days: 31)
        #expect(try await refusal(server, clientFileID: 1)?.clientReset?.reason == .clientExpired)
        await server.stop()
    }
}
