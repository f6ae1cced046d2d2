import Testing

@testable import SyncStreams

@Suite struct RateTests {
    typealias Progress = RateHarness.Progress

    @Test func theDocCommentsMarbleExampleHolds() {
        let harness = RateHarness(window: .seconds(2))
        harness.play([(0, 0), (1, 100), (2, 200), (3, 300), (6, 400)], of: 400)
        harness.at(7)
        harness.subject.send(completion: .finished)
        harness.executor.advance(by: .zero)
        #expect(
            harness.seen == [
                .rate(at: .seconds(0), bytesPerSecond: 0, remaining: nil),
                .rate(at: .seconds(1), bytesPerSecond: 100, remaining: .seconds(3)),
                .rate(at: .seconds(2), bytesPerSecond: 100, remaining: .seconds(2)),
                .rate(at: .seconds(3), bytesPerSecond: 100, remaining: .seconds(1)),
                .rate(at: .seconds(5), bytesPerSecond: 0, remaining: nil),
                .rate(at: .seconds(6), bytesPerSecond: 100.0 / 3, remaining: .zero),
                .finished,
            ])
        #expect(harness.executor.pendingCount == 0, "the completion cancelled the stall timer")
    }

    @Test func theFirstValueGivesRateZeroAndUnknownTimeRemaining() {
        let harness = RateHarness(window: .seconds(2))
        harness.send(50, of: 400)
        #expect(harness.seen == [.rate(at: .zero, bytesPerSecond: 0, remaining: nil)])
        #expect(harness.executor.pendingCount == 0, "no stall timer while the rate is 0")
    }

    @Test func samplesOlderThanTheWindowNoLongerCount() {
        // Window 2 s: at 4 s the baseline is the sample at 1 s (the latest at least 2 s old), not the one
        // at 0 s: (1200 − 1000) / 3 s, not 1200 / 4 s.
        let harness = RateHarness(window: .seconds(2))
        harness.play([(0, 0), (1, 1_000), (3, 1_100), (4, 1_200)], of: 10_000)
        let last = harness.seen.last
        #expect(last == .rate(at: .seconds(4), bytesPerSecond: 200.0 / 3, remaining: .milliseconds(132_000)))
    }

    @Test func reportsSparserThanTheWindowAreMeasuredOverTheWholeGap() {
        // Window 1 s, a report every 3 s: between two reports the rate is measured from the previous one
        // (the baseline), 300 bytes over 3 s, not 0 for lack of two samples inside the last second.
        let harness = RateHarness(window: .seconds(1))
        harness.play([(0, 0), (3, 300)], of: 900)
        #expect(harness.seen.last == .rate(at: .seconds(3), bytesPerSecond: 100, remaining: .seconds(6)))
    }

    @Test func aStallOfAWholeWindowDropsTheRateToZeroExactlyAWindowAfterTheNewestValue() {
        let harness = RateHarness(window: .seconds(2))
        harness.play([(0, 0), (1, 100)], of: 1_000)
        harness.executor.advance(by: .milliseconds(1_999))
        #expect(harness.seen.count == 2, "nothing before the window has passed")
        harness.executor.advance(by: .milliseconds(1))
        #expect(harness.seen.last == .rate(at: .seconds(3), bytesPerSecond: 0, remaining: nil))
        harness.executor.advance(by: .seconds(60))
        #expect(harness.seen.count == 3, "one stall value, then quiet")
        #expect(harness.executor.pendingCount == 0)
    }

    @Test func valuesArrivingBeforeTheDeadlinePostponeTheStall() {
        let harness = RateHarness(window: .seconds(2))
        harness.send(0, of: 1_000)
        for second in 1...5 {
            harness.at(second)
            harness.send(second * 100, of: 1_000)
        }
        let zeros = harness.seen.dropFirst().filter { if case .rate(_, 0, _) = $0 { true } else { false } }
        #expect(zeros.isEmpty, "a value every second never looks stalled with a 2 s window: \(harness.seen)")
        harness.at(7)
        #expect(harness.seen.last == .rate(at: .seconds(7), bytesPerSecond: 0, remaining: nil))
    }

    @Test func aFastStreamDoesNotRescheduleTheTimerPerValue() {
        let harness = RateHarness(window: .seconds(2))
        for step in 0..<100 {
            harness.executor.advance(by: .milliseconds(10))
            harness.send(step * 10, of: 10_000)
        }
        #expect(harness.executor.scheduledDelays.count <= 1)
        #expect(harness.executor.pendingCount == 1)
    }

    @Test func transferredGoingBackwardsStartsTheMeasurementAgain() {
        let harness = RateHarness(window: .seconds(10))
        harness.play([(0, 0), (1, 500)], of: 1_000)
        harness.at(2)
        harness.send(100, of: 300)  // re-based: a new transfer counted from 0
        #expect(harness.seen.last == .rate(at: .seconds(2), bytesPerSecond: 0, remaining: nil))
        harness.at(3)
        harness.send(200, of: 300)
        #expect(harness.seen.last == .rate(at: .seconds(3), bytesPerSecond: 100, remaining: .seconds(1)))
    }

    @Test func timeRemainingIsZeroWhenNothingRemainsEvenAtRateZero() {
        let harness = RateHarness(window: .seconds(2))
        harness.send(300, of: 300)
        #expect(harness.seen == [.rate(at: .zero, bytesPerSecond: 0, remaining: .zero)])
    }

    @Test func anUnchangedRateIsNotEmittedAgain() {
        let harness = RateHarness(window: .seconds(2))
        harness.play([(0, 300), (1, 300), (2, 300)], of: 300)
        #expect(harness.seen == [.rate(at: .zero, bytesPerSecond: 0, remaining: .zero)])
    }

    @Test func valuesAreDeliveredOnTheExecutor() {
        let harness = RateHarness(window: .seconds(2))
        harness.subject.send(RateHarness.Progress(0, of: 10))
        #expect(harness.seen.isEmpty, "nothing before the executor runs")
        harness.executor.advance(by: .zero)
        #expect(harness.seen.count == 1)
    }

    @Test func aFailurePassesThroughAtOnceAndCancelsTheStallTimer() {
        let harness = RateHarness(window: .seconds(2))
        harness.play([(0, 0), (1, 100)], of: 1_000)
        #expect(harness.executor.pendingCount == 1)
        harness.subject.send(completion: .failure(.boom))
        harness.executor.advance(by: .zero)
        #expect(harness.seen.last == .failure(.boom))
        #expect(harness.seen.count == 3)
        #expect(harness.executor.pendingCount == 0)
    }

    @Test func invalidateCancelsTheStallTimerAndReleasesEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<RateHarness.Progress, Never>()
        let count = AtomicCounter()
        var probe: Marble.Probe? = Marble.Probe()
        let weak = Marble.WeakBox(probe!)
        let token = subject.rate(window: .seconds(2), on: executor).subscribe { [probe] _ in
            _ = probe
            _ = count.increment()
        }
        probe = nil
        subject.send(RateHarness.Progress(0, of: 1_000))
        executor.advance(by: .seconds(1))
        subject.send(RateHarness.Progress(100, of: 1_000))
        executor.advance(by: .zero)
        #expect(executor.pendingCount == 1, "the stall timer")
        token.invalidate()
        #expect(executor.pendingCount == 0)
        #expect(weak.object == nil)
        subject.send(RateHarness.Progress(200, of: 1_000))
        executor.run()
        #expect(count.value == 2)
    }

    @Test func stateMachineMeasuresFromTheLatestSampleAtLeastAWindowOld() {
        typealias Machine = RateStateMachine<RateHarness.Progress, Never>
        func at(_ seconds: Int) -> StreamInstant { StreamInstant(sinceOrigin: .seconds(seconds)) }
        var samples = [0, 1, 2, 3].map {
            Machine.Sample(time: at($0), transferred: $0 * $0 * 100, transferrable: 2_000)
        }
        // At 3 s with a 1 s window: baseline is the sample at 2 s (400 → 900 over 1 s).
        let rate = Machine.rate(of: &samples, at: at(3), window: .seconds(1))
        #expect(rate == TransferRate(bytesPerSecond: 500, estimatedTimeRemaining: .milliseconds(2_200)))
        #expect(samples.map(\.transferred) == [400, 900], "samples before the baseline are dropped")
    }

    @Test func stateMachineTrapsOnAValueAfterTheCompletion() async {
        // An event no state can receive breaks the stream contract: it traps with a message instead of
        // being dropped silently.
        await #expect(processExitsWith: .failure) {
            var machine = RateStateMachine<Progress, Never>(window: .seconds(1))
            _ = machine.valueReceived(Progress(0, of: 10), at: .zero)
            _ = machine.completed(.finished, at: .zero)
            _ = machine.valueReceived(Progress(5, of: 10), at: .zero)
        }
    }

    @Test func stateMachineDropsAValueOnItsWayWhenTheSubscriberLeft() {
        var machine = RateStateMachine<Progress, Never>(window: .seconds(1))
        _ = machine.valueReceived(Progress(0, of: 10), at: .zero)
        _ = machine.cancelled()
        let late = machine.valueReceived(Progress(5, of: 10), at: .zero)
        #expect(late.value == nil && late.effect == nil)
        #expect(machine.completed(.finished, at: .zero).completion == nil)
    }
}
