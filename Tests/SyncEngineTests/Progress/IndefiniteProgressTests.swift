import Testing

@testable import SyncEngine

/// The `.reportIndefinitely` state machine, without threads.
@Suite("IndefiniteProgress (reportIndefinitely state machine)")
struct IndefiniteProgressTests {
    /// Feeds `(t, T)` pairs and returns the reports.
    private func run(_ updates: [(Int, Int)]) -> [SyncProgress] {
        var machine = IndefiniteProgress()
        return updates.map { machine.update(transferred: $0.0, transferrable: $0.1) }
    }

    @Test("1. nothing is known before the first update")
    func unknownAtFirst() {
        let machine = IndefiniteProgress()
        #expect(machine.latest == nil)
        #expect(machine.base == 0)
    }

    @Test("3. the documented example: (0,100) (50,100) (100,100) (100,200) (150,200)")
    func documentedExample() {
        let reports = run([(0, 100), (50, 100), (100, 100), (100, 200), (150, 200)])
        #expect(
            reports == [
                progress(0, 100, 0), progress(50, 100, 0.5), progress(100, 100, 1), progress(100, 200, 0),
                progress(150, 200, 0.5),
            ])
        #expect(reports[2].isTransferComplete)
    }

    @Test("3. base is the transferred count at the last complete point")
    func baseMovesAtCompletion() {
        var machine = IndefiniteProgress()
        machine.update(transferred: 40, transferrable: 100)
        #expect(machine.base == 0)
        machine.update(transferred: 100, transferrable: 100)
        #expect(machine.base == 100)
        machine.update(transferred: 150, transferrable: 300)
        #expect(machine.base == 100)
        machine.update(transferred: 300, transferrable: 300)
        #expect(machine.base == 300)
    }

    @Test("3. the estimate restarts from 0 only after it reached 1 (a growing total lowers it, no restart)")
    func noRestartBeforeComplete() {
        let reports = run([(0, 100), (50, 100), (50, 200), (200, 200), (200, 300)])
        #expect(reports.map(\.progressEstimate) == [0, 0.5, 0.25, 1, 0])
    }

    @Test("3. reports complete many times")
    func completeManyTimes() {
        let reports = run([(100, 100), (100, 200), (200, 200), (200, 300), (300, 300)])
        #expect(reports.map(\.isTransferComplete) == [true, false, true, false, true])
        #expect(reports.map(\.progressEstimate) == [1, 0, 1, 0, 1])
    }

    @Test("3. always the most up-to-date transferrable")
    func latestTransferrable() {
        let reports = run([(0, 100), (10, 500), (20, 50)])
        #expect(reports.map(\.transferrableBytes) == [100, 500, 50])
    }

    @Test("3. base follows transferred down when the counters restart")
    func baseFollowsReset() {
        var machine = IndefiniteProgress()
        machine.update(transferred: 100, transferrable: 100)
        let report = machine.update(transferred: 10, transferrable: 50)
        #expect(machine.base == 10)
        #expect(report == progress(10, 50, 0))
    }

    @Test("6. negative inputs clamp to 0; transferrable below transferred is raised")
    func sanitizesInput() {
        #expect(run([(-5, -10)]) == [progress(0, 0, 1)])
        #expect(run([(-5, 10)]) == [progress(0, 10, 0)])
        #expect(run([(80, 20)]) == [progress(80, 80, 1)])
    }

    @Test("6. estimate never NaN and in 0...1: T == 0, t > T, near Int.max")
    func estimateAlwaysValid() {
        let cases: [[(Int, Int)]] = [
            [(0, 0)], [(5, 0)], [(10, 5)], [(0, Int.max)], [(Int.max - 1, Int.max)], [(Int.max, Int.max)],
            [(Int.max, Int.max), (Int.max, Int.max)], [(1, 1), (Int.max - 1, Int.max)], [(Int.min, Int.min)],
            [(Int.min, Int.max)],
        ]
        for updates in cases {
            for report in run(updates) {
                #expect(!report.progressEstimate.isNaN, "\(updates)")
                #expect((0...1).contains(report.progressEstimate), "\(updates)")
                #expect((report.progressEstimate == 1) == report.isTransferComplete, "\(updates)")
            }
        }
    }
}
