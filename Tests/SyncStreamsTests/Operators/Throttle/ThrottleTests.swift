import Testing

@testable import SyncStreams

@Suite struct ThrottleTests {
    let interval = Marble.tick * 3

    func throttled(_ input: String, latest: Bool) -> [TimedEvent] {
        Marble.run(input) { subject, executor in subject.throttle(for: interval, on: executor, latest: latest) }
    }

    @Test func latestDeliversTheNewestValueAtEachWindowsEnd() {
        #expect(throttled("abc-------d-e-f|", latest: true) == Marble.parse("a--c------d--e--(f|)"))
    }

    @Test func firstDeliversTheFirstValueOfEachWindow() {
        #expect(throttled("abc-------d-e-f|", latest: false) == Marble.parse("a--b------d--e--(f|)"))
    }

    @Test func atMostOneValuePerIntervalUnderContinuousInput() {
        #expect(throttled("abcdefgh|", latest: true) == Marble.parse("a--d--g--(h|)"))
        #expect(throttled("abcdefgh|", latest: false) == Marble.parse("a--b--e--(h|)"))
    }

    @Test func aWindowEndingWithNothingHeldMakesTheStreamQuietAgain() {
        #expect(throttled("a-----b|", latest: true) == Marble.parse("a-----b|"))
        #expect(throttled("a--b-----c|", latest: true) == Marble.parse("a--b-----c|"))
    }

    @Test func aHeldValueIsDeliveredBeforeTheCompletion() {
        #expect(throttled("ab|", latest: true) == Marble.parse("a--(b|)"))
        #expect(throttled("abc|", latest: false) == Marble.parse("a--(b|)"))
    }

    @Test func aHeldValueIsDeliveredBeforeTheFailure() {
        #expect(throttled("ab#", latest: true) == Marble.parse("a--(b#)"))
        #expect(throttled("#", latest: true) == Marble.parse("#"))
    }

    @Test func invalidationMidWindowDropsTheHeldValue() {
        let output = Marble.run("ab-c--d|", invalidateAt: Marble.tick * 2) { subject, executor in
            subject.throttle(for: interval, on: executor, latest: true)
        }
        #expect(output == Marble.parse("a"))
    }

    @Test func deliversOnTheExecutor() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.throttle(for: .seconds(1), on: executor, latest: true))
        subject.send(1)
        #expect(recorder.events.isEmpty)
        executor.advance(by: .zero)
        #expect(recorder.values == [1])
        #expect(executor.scheduledDelays == [.seconds(1)])
        token.invalidate()
    }

    @Test func completionWithNothingHeldCancelsTheTimer() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.throttle(for: .seconds(1), on: executor, latest: true))
        subject.send(1)
        executor.advance(by: .zero)
        #expect(executor.pendingCount == 1)
        subject.send(completion: .finished)
        executor.advance(by: .zero)
        #expect(executor.pendingCount == 0)
        #expect(recorder.events == [.value(1), .finished])
        token.invalidate()
    }

    @Test func invalidateMidWindowCancelsTheTimerAndReleasesEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        var probe: Marble.Probe? = Marble.Probe()
        let weak = Marble.WeakBox(probe!)
        let token = subject.throttle(for: .seconds(1), on: executor, latest: true).subscribe { [probe] value in
            _ = probe
            recorder.record(.value(value))
        }
        probe = nil
        subject.send(1)
        executor.advance(by: .milliseconds(100))
        subject.send(2)
        #expect(executor.pendingCount == 1)
        token.invalidate()
        #expect(executor.pendingCount == 0)
        #expect(weak.object == nil)
        subject.send(3)
        executor.run()
        #expect(recorder.values == [1])
    }

    @Test func invalidateFromInsideTheCallbackStopsEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let box = Marble.TokenBox()
        box.token = subject.throttle(for: .seconds(1), on: executor, latest: true).subscribe { value in
            recorder.record(.value(value))
            subject.send(value + 10)
            box.invalidate()
        }
        subject.send(1)
        executor.run()
        #expect(recorder.values == [1])
        #expect(executor.pendingCount == 0)
    }

    @Test(arguments: [(true, 3), (false, 2)])
    func stateMachineHoldsTheNewestOrTheFirstValue(latest: Bool, expected: Int) {
        var machine = ThrottleStateMachine<Int, Never>(interval: .seconds(1), latest: latest)
        let first = machine.valueReceived(1)
        #expect(first.value == 1 && first.effect?.startTimer?.request.epoch == 1, "1 goes out and opens a window")
        #expect(machine.valueReceived(2).value == nil)
        let third = machine.valueReceived(3)
        #expect(third.value == nil)
        #expect(third.effect?.discarded == (latest ? 2 : 3), "the value not kept is released outside the lock")
        let windowEnd = machine.timerFired(epoch: 1)
        #expect(windowEnd.value == expected && windowEnd.effect?.startTimer?.request.epoch == 2)
        #expect(machine.timerFired(epoch: 2).value == nil, "the window did not end quietly")
        let fourth = machine.valueReceived(4)
        #expect(fourth.value == 4, "after a quiet window the next value goes out at once")
        #expect(machine.timer.store(ScheduledWork {}, epoch: fourth.effect?.startTimer?.request.epoch ?? 0) == nil)
        let completion = machine.completed(.finished)
        #expect(completion.value == nil && completion.completion == .finished && completion.effect?.cancelTimer != nil)
    }

    // Events no state can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func stateMachineTrapsOnASecondCompletion() async {
        await #expect(processExitsWith: .failure) {
            var machine = ThrottleStateMachine<Int, Never>(interval: .seconds(1), latest: true)
            _ = machine.completed(.finished)
            _ = machine.completed(.finished)
        }
    }

    @Test func stateMachineTrapsOnAValueAfterTheCompletionItHolds() async {
        await #expect(processExitsWith: .failure) {
            var machine = ThrottleStateMachine<Int, Never>(interval: .seconds(1), latest: true)
            _ = machine.valueReceived(1)
            _ = machine.valueReceived(2)
            _ = machine.completed(.finished)
            _ = machine.valueReceived(3)
        }
    }

    @Test func stateMachineDropsEventsOnTheirWayWhenTheSubscriberLeft() {
        var machine = ThrottleStateMachine<Int, Never>(interval: .seconds(1), latest: true)
        _ = machine.valueReceived(1)
        _ = machine.cancelled()
        #expect(machine.valueReceived(2).value == nil)
        #expect(machine.completed(.finished).completion == nil)
        #expect(machine.timerFired(epoch: 1).value == nil, "the stopped timer does nothing")
    }

    @Test func stateMachineDeliversTheHeldValueThenTheCompletionWhenTheWindowEnds() {
        var machine = ThrottleStateMachine<Int, MarbleError>(interval: .seconds(1), latest: true)
        _ = machine.valueReceived(1)
        _ = machine.valueReceived(2)
        let completion = machine.completed(.failure(MarbleError()))
        #expect(completion.value == nil && completion.completion == nil, "held until the window ends")
        let windowEnd = machine.timerFired(epoch: 1)
        #expect(windowEnd.value == 2 && windowEnd.completion == .failure(MarbleError()))
        #expect(machine.timerFired(epoch: 2).value == nil, "no timer fires after the end")
    }
}
