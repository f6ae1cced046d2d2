import Testing

@testable import SyncEngine

/// The `.forCurrentlyOutstandingWork` state machine, without threads. Input reports are the sanitized
/// `(t, T)` of the notifier (their estimate is irrelevant here).
@Suite("OutstandingWorkProgress (forCurrentlyOutstandingWork state machine)")
struct OutstandingWorkProgressTests {
    typealias Action = OutstandingWorkProgress.Action

    /// Feeds `(t, T)` reports and returns the actions.
    private func run(_ reports: [(Int, Int)], machine: inout OutstandingWorkProgress) -> [Action] {
        reports.map { machine.receive(progress($0.0, $0.1, 0)) }
    }

    private func run(_ reports: [(Int, Int)]) -> [Action] {
        var machine = OutstandingWorkProgress()
        return run(reports, machine: &machine)
    }

    @Test("4. the documented marble: (0,100) (50,300) (40,300) (80,90) (90,400)")
    func documentedMarble() {
        #expect(
            run([(0, 100), (50, 300), (40, 300), (80, 90), (90, 400)]) == [
                .emit(progress(0, 100, 0)), .emit(progress(50, 100, 0.5)), .none,
                .emit(progress(80, 90, 80.0 / 90.0)), .emitAndFinish(progress(90, 90, 1)),
            ])
    }

    @Test("4. captures transferrable from the first report")
    func capturesFirst() {
        var machine = OutstandingWorkProgress()
        #expect(machine.capturedTransferrableBytes == nil)
        _ = machine.receive(progress(10, 100, 0))
        #expect(machine.capturedTransferrableBytes == 100)
    }

    @Test("4. forCurrentlyOutstandingWork: captured total only goes down")
    func capturedOnlyGoesDown() {
        var machine = OutstandingWorkProgress()
        let actions = run([(0, 100), (10, 80), (20, 150), (30, 60)], machine: &machine)
        #expect(actions.map { if case .emit(let p) = $0 { p.transferrableBytes } else { -1 } } == [100, 80, 80, 60])
        #expect(machine.capturedTransferrableBytes == 60)
    }

    @Test("4. a bigger transferrable is ignored")
    func biggerIgnored() {
        #expect(run([(0, 100), (0, 1000)]) == [.emit(progress(0, 100, 0)), .none])
        #expect(run([(0, 100), (60, 1000)]) == [.emit(progress(0, 100, 0)), .emit(progress(60, 100, 0.6))])
    }

    @Test("4. values never go backwards: a drop in transferred keeps the previous")
    func neverBackwards() {
        #expect(
            run([(0, 100), (50, 100), (20, 100), (60, 100)]) == [
                .emit(progress(0, 100, 0)), .emit(progress(50, 100, 0.5)), .none, .emit(progress(60, 100, 0.6)),
            ])
    }

    @Test("4. captured total never drops below what was already reported transferred")
    func captureFloorIsReported() {
        // t drops to 10 and T to 40, below the 50 already reported: transferred stays 50, the total
        // drops to 50, and that is complete.
        #expect(run([(0, 100), (50, 100), (10, 40)]).last == .emitAndFinish(progress(50, 50, 1)))
    }

    @Test("4. once transferred >= captured: exactly one final event with 1.0 and complete, then nothing")
    func finalEventOnce() {
        var machine = OutstandingWorkProgress()
        let actions = run([(0, 100), (100, 100), (100, 100), (150, 200), (200, 200)], machine: &machine)
        #expect(actions == [.emit(progress(0, 100, 0)), .emitAndFinish(progress(100, 100, 1)), .none, .none, .none])
        #expect(machine.isFinished)
    }

    @Test("4. transferred beyond captured completes at the captured total")
    func overshootCompletes() {
        #expect(run([(0, 100), (150, 300)]) == [.emit(progress(0, 100, 0)), .emitAndFinish(progress(100, 100, 1))])
    }

    @Test("4. nothing outstanding at the first report: complete at once")
    func nothingOutstanding() {
        #expect(run([(0, 0)]) == [.emitAndFinish(progress(0, 0, 1))])
        #expect(run([(70, 70)]) == [.emitAndFinish(progress(70, 70, 1))])
    }

    @Test("5. an identical report is not repeated")
    func noRepeats() {
        #expect(run([(10, 100), (10, 100), (10, 100)]) == [.emit(progress(10, 100, 0.1)), .none, .none])
    }

    @Test("6. estimate never NaN and in 0...1, and 1.0 only with the final event, near Int.max")
    func hugeNumbers() {
        let actions = run([(0, Int.max), (Int.max - 1, Int.max), (Int.max, Int.max)])
        #expect(actions.count == 3)
        guard case .emit(let almost) = actions[1] else {
            Issue.record("expected an emit, got \(actions[1])")
            return
        }
        #expect(almost.progressEstimate < 1 && almost.progressEstimate > 0.99)
        #expect(actions[2] == .emitAndFinish(progress(Int.max, Int.max, 1)))
    }
}
