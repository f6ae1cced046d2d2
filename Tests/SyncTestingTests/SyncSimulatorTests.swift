import Foundation
import SyncServer
import SyncTesting
import TestSupport
import Testing

/// `SyncSimulator` used as an app's tests would use it: every fault it offers, each checked against what
/// the session reports and what the server holds, in virtual time.
@Suite(.timeLimit(.minutes(10))) struct SyncSimulatorTests {
    private func openSession(
        _ simulator: SyncSimulator, partition: String = "tasks", mode: ClientResetMode = .recoverUnsyncedChanges
    ) async throws -> SyncSession {
        let session = try await simulator.makeApp(clientResetMode: mode).login(.anonymous)
            .openSession(partition: partition)
        try await simulator.run(until: { session.status.value.activity == .synced })
        return session
    }

    @Test func reconnectsOnlyWhenTheVirtualClockReachesTheBackoff() async throws {
        let simulator = try await SyncSimulator(seed: 1)
        let session = try await openSession(simulator)
        simulator.dropConnection()
        try await simulator.run(until: { session.status.value.connection == .disconnected }, timeout: .zero)
        guard case .waitingToReconnect(let next, let error)? = session.status.value.offlineReason else {
            Issue.record("offline reason: \(String(describing: session.status.value.offlineReason))")
            return
        }
        #expect(error != nil)
        // The first backoff is 1 s with jitter: the session is connected once the clock reaches the
        // announced attempt, and not before.
        let wait = next.timeIntervalSince(simulator.date)
        #expect(wait > 0 && wait <= 2, "next attempt in \(wait) s")
        // The event that makes the negative check mean something: the reconnection is a timer on the
        // virtual clock, scheduled for the announced attempt (a reconnection on a real-time timer, or
        // none, fails here). With it pending and the engine's work settled, nothing reconnects while the
        // clock stands still — checked without a real-time pause.
        try await simulator.run(
            until: {
                simulator.executor.scheduledDelays.contains { abs($0 / .seconds(1) - wait) < 0.001 }
                    && simulator.executor.pendingCount > 0
            }, timeout: .zero)
        await simulator.settle()
        #expect(simulator.date < next, "the clock stood still, before the announced attempt")
        #expect(session.status.value.connection == .disconnected)
        #expect(simulator.droppedConnections == 1)
        let start = simulator.elapsed
        try await simulator.run(until: { session.status.value.connection == .connected })
        let took = simulator.elapsed - start
        #expect(abs((took - .seconds(wait)) / .milliseconds(1)) < 2, "reconnected after \(took), announced \(wait) s")
        await simulator.close()
    }

    @Test func runGivesUpAtItsRealTimeLimitBeforeMovingTheClock() async throws {
        let simulator = try await SyncSimulator(seed: 9)
        let session = try await openSession(simulator)
        simulator.dropConnection()
        // A reconnection timer is pending, so only the real-time limit (none left) stops the clock moving.
        let error = await #expect(throws: SyncSimulator.TimeoutError.self) {
            try await simulator.run(until: { session.status.value.pending.uploadChangesets > 0 }, realTimeLimit: .zero)
        }
        #expect(error?.realTimeLimitReached == true, "\(String(describing: error))")
        #expect(error?.virtualTime == .zero)
        await simulator.close()
    }

    @Test func delayedMessagesArriveTheDelayLater() async throws {
        let simulator = try await SyncSimulator(seed: 2)
        let session = try await openSession(simulator)
        simulator.delay(by: .seconds(2))
        _ = try await session.write(Data("slow".utf8))
        await simulator.settle()
        // The upload reaches the server 2 s later, its acknowledgement the client 2 s after that.
        await simulator.advance(by: .milliseconds(3_900))
        #expect(session.status.value.pending.uploadChangesets == 1)
        #expect(try await simulator.changesets(in: "tasks").count == 1)
        await simulator.advance(by: .milliseconds(100))
        #expect(session.status.value.pending.uploadChangesets == 0)
        #expect(session.status.value.connection == .connected)
        await simulator.close()
    }

    @Test func aStallHoldsEveryMessageThenDeliversThemInOrder() async throws {
        let simulator = try await SyncSimulator(seed: 3)
        let writer = try await openSession(simulator)
        let reader = try await openSession(simulator)
        let received = Locked<[String]>([])
        let token = reader.changesets.subscribe { changeset in
            received.withLock { $0.append(String(decoding: changeset.data, as: UTF8.self)) }
        }
        simulator.stall(for: .seconds(30))
        for text in ["a", "b", "c"] { _ = try await writer.write(Data(text.utf8)) }
        await simulator.advance(by: .seconds(29))
        #expect(writer.status.value.pending.uploadChangesets == 3)
        #expect(try await simulator.changesets(in: "tasks").isEmpty)
        #expect(writer.status.value.connection == .connected)
        try await simulator.run(
            until: { received.withLock { $0.count } == 3 && writer.status.value.pending.uploadChangesets == 0 })
        #expect(received.withLock { $0 } == ["a", "b", "c"])
        #expect(simulator.elapsed >= .seconds(30))
        token.invalidate()
        await simulator.close()
    }

    @Test func theServerDownRefusesConnectionsAndKeepsItsData() async throws {
        let simulator = try await SyncSimulator(seed: 4)
        let session = try await openSession(simulator)
        _ = try await session.write(Data("before".utf8))
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
        await simulator.takeServerDown()
        try await simulator.run(until: { session.status.value.connection == .disconnected })
        // Ten minutes of attempts, every one refused.
        await simulator.advance(by: .seconds(600))
        #expect(session.status.value.connection == .disconnected)
        guard case .waitingToReconnect(_, let error?)? = session.status.value.offlineReason else {
            Issue.record("offline reason: \(String(describing: session.status.value.offlineReason))")
            return
        }
        #expect("\(error)".contains("down"), "\(error)")
        try await simulator.bringServerUp()
        session.reconnect()
        try await simulator.run(until: { session.status.value.activity == .synced })
        #expect(try await simulator.changesets(in: "tasks").count == 1)
        await simulator.close()
    }

    @Test func takeServerAwayRefusesForItsDurationThenServesAgain() async throws {
        let simulator = try await SyncSimulator(seed: 6)
        let session = try await openSession(simulator)
        _ = try await session.write(Data("before".utf8))
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
        let start = simulator.elapsed
        try await simulator.takeServerAway(for: .seconds(120))
        // The whole time passed in virtual time, and the session was refused meanwhile.
        #expect(simulator.elapsed - start >= .seconds(120))
        guard case .waitingToReconnect(_, _?)? = session.status.value.offlineReason else {
            Issue.record("offline reason: \(String(describing: session.status.value.offlineReason))")
            return
        }
        _ = try await session.write(Data("after".utf8))
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
        #expect(try await simulator.changesets(in: "tasks").count == 2)
        await simulator.close()
    }

    @Test(arguments: [ClientResetMode.recoverUnsyncedChanges, .discardUnsyncedChanges])
    func forcedClientResetResetsTheSessionAndKeepsTheServersLog(mode: ClientResetMode) async throws {
        let simulator = try await SyncSimulator(seed: 5)
        let session = try await openSession(simulator, mode: mode)
        let resets = Locked<[String]>([])
        let token = session.clientResets.subscribe { event in
            resets.withLock {
                switch event {
                case .willReset: $0.append("will")
                case .didReset: $0.append("did")
                }
            }
        }
        _ = try await session.write(Data("synced".utf8))
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
        try await simulator.forceClientReset("tasks")
        try await simulator.run(until: { resets.withLock { $0 } == ["will", "did"] })
        try await simulator.run(until: { session.status.value.activity == .synced })
        // The log kept its entry; the reset session syncs new writes.
        _ = try await session.write(Data("after".utf8))
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 })
        let log = try await simulator.changesets(in: "tasks").map { String(decoding: $0.data, as: UTF8.self) }
        #expect(log == ["synced", "after"])
        token.invalidate()
        await simulator.close()
    }

    @Test func aForcedResetLeavesOtherPartitionsAlone() async throws {
        let simulator = try await SyncSimulator(seed: 6)
        let app = simulator.makeApp()
        let user = try await app.login(.anonymous)
        let reset = try await user.openSession(partition: "reset")
        let other = try await user.openSession(partition: "other")
        let resets = Locked<[String: Int]>([:])
        let tokens = [reset, other].map { session in
            session.clientResets.subscribe { _ in resets.withLock { $0[session.partition, default: 0] += 1 } }
        }
        try await simulator.run(until: {
            reset.status.value.activity == .synced && other.status.value.activity == .synced
        })
        try await simulator.forceClientReset("reset")
        try await simulator.run(until: { resets.withLock { $0["reset"] } == 2 })
        try await simulator.run(until: {
            other.status.value.activity == .synced && reset.status.value.activity == .synced
        })
        #expect(resets.withLock { $0["other"] } == nil)
        tokens.forEach { $0.invalidate() }
        await simulator.close()
    }

    @Test func seededFlakinessLosesNoWrite() async throws {
        let seed: UInt64 = 2026
        print("SyncSimulatorTests.seededFlakinessLosesNoWrite seed \(seed)")
        let simulator = try await SyncSimulator(
            seed: seed, flakiness: .init(dropProbability: 0.1, maximumExtraDelay: .milliseconds(300)))
        let session = try await simulator.makeApp().login(.anonymous).openSession(partition: "tasks")
        // Each write its own upload (the clock moves between them), so dozens of messages cross the network.
        for index in 0..<20 {
            _ = try await session.write(Data("w\(index)".utf8))
            await simulator.advance(by: .milliseconds(500))
        }
        try await simulator.run(until: { session.status.value.pending.uploadChangesets == 0 }, timeout: .seconds(3_600))
        #expect(simulator.droppedConnections > 0)
        let log = try await simulator.changesets(in: "tasks").map { String(decoding: $0.data, as: UTF8.self) }
        #expect(log == (0..<20).map { "w\($0)" })
        simulator.setFlakiness(.none)
        await simulator.close()
    }
}
