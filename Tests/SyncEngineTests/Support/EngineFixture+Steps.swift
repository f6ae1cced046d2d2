import Foundation
import TestSupport
import Testing

@testable import SyncEngine

/// The steps engine tests repeat on an `EngineFixture`: opening sessions, and moving its virtual timers.
extension EngineFixture {
    /// Opens a session on `partition` and waits until it is connected.
    func openConnected(_ partition: String = "p") async throws -> SyncSession {
        let session = try await open(partition)
        try await eventually("connected") { session.connectionState.value == .connected }
        return session
    }

    /// Opens a session on each of `partitions`, then waits until each has downloaded what the server held.
    func openSynced(_ partitions: String...) async throws -> [SyncSession] {
        var sessions: [SyncSession] = []
        for partition in partitions { sessions.append(try await open(partition)) }
        for session in sessions { try await session.wait(for: .download) }
        return sessions
    }

    /// Waits until the earliest timer is due `delay` from now (a reconnect, a ping or a timeout armed);
    /// `what` names it.
    func waitForTimer(in delay: Duration, _ what: String) async throws {
        try await eventually(what) { timers.nextDueTime == timers.now + delay }
    }

    /// Makes the attempt a reconnect timer starts after `delay` hang, and lets it fail by connect timeout:
    /// moves the clock on by `delay`, waits until attempt number `attempt` armed its 120 s connect timeout
    /// (the only timer), and moves the clock on by 120 s.
    func nextAttemptTimesOut(after delay: Duration, attempt: Int) async throws {
        transport.faults = .init(hold: true)
        timers.advance(by: delay)
        try await eventually("connect timeout armed") { transport.attempts == attempt && timers.pendingCount == 1 }
        #expect(timers.nextDueTime == timers.now + .seconds(120))
        timers.advance(by: .seconds(120))
    }

    /// Lets the first attempt (refused by `faults.refuse`, so that a test can subscribe before the session
    /// binds) fail, then connects: stops refusing and lets the reconnect after the 1 s backoff go, in
    /// virtual time.
    func connectAfterTheRefusedAttempt() async throws {
        try await waitForTimer(in: .seconds(1), "the reconnect scheduled")
        transport.faults.refuse = false
        timers.advance(by: .seconds(1))
    }
}
