import Foundation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

/// The checker finds each kind of violation it claims to (so a quiet simulation means something).
@Suite struct InvariantCheckerTests {
    private func writes(_ count: Int) -> (SimulationModel, [SimulationModel.Write]) {
        let model = SimulationModel()
        var random = TestSupportRandom.generator
        let made = (0..<count).map { _ in model.newWrite(app: 0, partition: 0, bytes: 40, random: &random) }
        for write in made { model.finish(write.id, .durable) }
        return (model, model.writes)
    }

    private func log(_ writes: [SimulationModel.Write]) -> [StoredChangeset] {
        writes.enumerated().map { index, write in
            StoredChangeset(
                serverVersion: UInt64(index + 1), clientFileID: 1, clientVersion: 1, data: Array(write.data))
        }
    }

    private func session(_ log: [StoredChangeset]) -> InvariantChecker.SessionView {
        InvariantChecker.SessionView(
            name: "s", partition: 0,
            changesets: Dictionary(uniqueKeysWithValues: log.map { ($0.serverVersion, Data($0.data)) }),
            outstanding: [], isInvalid: false, lastError: nil)
    }

    @Test func aConvergedRunHasNoViolation() {
        let (_, all) = writes(3)
        let serverLog = log(all)
        #expect(InvariantChecker.check(writes: all, serverLogs: [0: serverLog], sessions: [session(serverLog)]).isEmpty)
    }

    @Test func aDurableWriteMissingFromTheServerIsALoss() {
        let (_, all) = writes(3)
        let serverLog = log(Array(all.prefix(2)))
        let violations = InvariantChecker.check(writes: all, serverLogs: [0: serverLog], sessions: [])
        #expect(violations.count == 1)
        #expect(violations.first?.contains("never reached the server") == true)
    }

    @Test func aLossAFaultAllowsIsNoViolation() {
        let (model, _) = writes(3)
        model.allowLoss("test") { $0.id == 3 }
        let all = model.writes
        #expect(InvariantChecker.check(writes: all, serverLogs: [0: log(Array(all.prefix(2)))], sessions: []).isEmpty)
    }

    @Test func aChangesetTwiceInTheLogIsADuplicate() {
        let (_, all) = writes(2)
        let serverLog = log(all + [all[0]])
        let violations = InvariantChecker.check(writes: all, serverLogs: [0: serverLog], sessions: [])
        #expect(violations.contains { $0.contains("twice") })
    }

    @Test func aSessionBehindTheServerDidNotConverge() {
        let (_, all) = writes(3)
        let serverLog = log(all)
        let violations = InvariantChecker.check(
            writes: all, serverLogs: [0: serverLog], sessions: [session(Array(serverLog.prefix(2)))])
        #expect(violations.contains { $0.contains("did not converge") })
    }

    @Test func anUnfinishedOutstandingRegistrationIsAViolation() {
        let (_, all) = writes(1)
        let serverLog = log(all)
        var view = session(serverLog)
        var registration = SessionObserver.Outstanding(direction: .upload)
        registration.values = [SyncProgress(transferredBytes: 1, transferrableBytes: 2, progressEstimate: 0.5)]
        view = InvariantChecker.SessionView(
            name: view.name, partition: 0, changesets: view.changesets, outstanding: [registration], isInvalid: false,
            lastError: nil)
        let violations = InvariantChecker.check(writes: all, serverLogs: [0: serverLog], sessions: [view])
        #expect(violations.contains { $0.contains("outstanding") })
    }

    @Test func bytesNobodyWroteAreAViolation() {
        let (_, all) = writes(1)
        let serverLog =
            log(all) + [StoredChangeset(serverVersion: 2, clientFileID: 1, clientVersion: 2, data: [1, 2, 3])]
        let violations = InvariantChecker.check(writes: all, serverLogs: [0: serverLog], sessions: [])
        #expect(violations.contains { $0.contains("nobody wrote") })
    }
}

private enum TestSupportRandom {
    static var generator: SeededGenerator { SeededGenerator(seed: 42) }
}
