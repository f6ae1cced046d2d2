import Testing

@testable import SyncStreams

@Suite struct DebounceTests {
    let interval = Marble.tick * 3

    func debounced(_ input: String) -> [TimedEvent] {
        Marble.run(input) { subject, executor in subject.debounce(for: interval, on: executor) }
    }

    @Test func emitsOnlyAfterAQuietInterval() {
        #expect(debounced("ab----c-d----e|") == Marble.parse("----b------d--(e|)"))
    }

    @Test func aPendingValueIsDeliveredBeforeTheFinish() {
        #expect(debounced("a|") == Marble.parse("-(a|)"))
        #expect(debounced("a----|") == Marble.parse("---a-|"))
    }

    @Test func aPendingValueIsDeliveredBeforeTheFailure() {
        #expect(debounced("ab-#") == Marble.parse("---(b#)"))
        #expect(debounced("a----#") == Marble.parse("---a-#"))
        #expect(debounced("#") == Marble.parse("#"))
    }

    @Test func invalidationWhileAValueIsPendingDropsIt() {
        let output = Marble.run("ab---c|", invalidateAt: Marble.tick * 3) { subject, executor in
            subject.debounce(for: interval, on: executor)
        }
        #expect(output.isEmpty)
    }

    @Test func eachValueRestartsTheOneTimer() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.debounce(for: .seconds(1), on: executor))
        for value in 1...5 {
            subject.send(value)
            executor.advance(by: .milliseconds(500))
        }
        #expect(executor.pendingCount == 1)
        #expect(recorder.events.isEmpty)
        executor.advance(by: .milliseconds(499))
        #expect(recorder.events.isEmpty)
        executor.advance(by: .milliseconds(1))
        #expect(recorder.values == [5])
        #expect(executor.now == StreamInstant(sinceOrigin: .milliseconds(3_000)))
        token.invalidate()
    }

    @Test func invalidateWhileAValueIsPendingCancelsTheTimerAndReleasesEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        var probe: Marble.Probe? = Marble.Probe()
        let weak = Marble.WeakBox(probe!)
        let token = subject.debounce(for: .seconds(1), on: executor).subscribe { [probe] value in
            _ = probe
            recorder.record(.value(value))
        }
        probe = nil
        subject.send(1)
        #expect(executor.pendingCount == 1)
        token.invalidate()
        #expect(executor.pendingCount == 0)
        #expect(weak.object == nil)
        executor.run()
        #expect(recorder.events.isEmpty)
    }

    @Test func invalidateFromInsideTheCallbackStopsEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let box = Marble.TokenBox()
        box.token = subject.debounce(for: .seconds(1), on: executor).subscribe { value in
            recorder.record(.value(value))
            subject.send(value + 10)
            box.invalidate()
        }
        subject.send(1)
        executor.run()
        #expect(recorder.values == [1])
        #expect(executor.pendingCount == 0)
    }

    @Test func stateMachineKeepsOnlyTheNewestPendingValueAndHandsTheReplacedOneOut() {
        var machine = DebounceStateMachine<Int, Never>(interval: .seconds(1))
        let first = machine.valueReceived(1)
        #expect(first.value == nil && first.effect?.startTimer?.request.epoch == 1)
        let second = machine.valueReceived(2)
        #expect(second.effect?.discarded == 1, "the replaced value is released outside the lock")
        #expect(second.effect?.startTimer?.request.epoch == 2)
        #expect(machine.timerFired(epoch: 1).value == nil, "a replaced timer does nothing")
        #expect(machine.timerFired(epoch: 2).value == 2)
        #expect(machine.timerFired(epoch: 2).value == nil, "emitted twice")
        let third = machine.valueReceived(3)
        #expect(machine.timer.store(ScheduledWork {}, epoch: third.effect?.startTimer?.request.epoch ?? 0) == nil)
        let completion = machine.completed(.finished)
        #expect(completion.value == 3 && completion.completion == .finished)
        #expect(completion.effect?.cancelTimer != nil)
    }

    @Test func stateMachineTrapsOnAValueAfterTheCompletion() async {
        // An event no phase can receive breaks the stream contract: it traps with a message instead of
        // being dropped silently.
        await #expect(processExitsWith: .failure) {
            var machine = DebounceStateMachine<Int, Never>(interval: .seconds(1))
            _ = machine.completed(.finished)
            _ = machine.valueReceived(4)
        }
    }

    @Test func stateMachineCancellationDropsThePendingValueAndEndsTheUpstream() {
        var machine = DebounceStateMachine<Int, Never>(interval: .seconds(1))
        _ = machine.valueReceived(1)
        let effect = machine.cancelled()
        #expect(effect.discarded == 1 && effect.endsUpstream)
        #expect(machine.timerFired(epoch: 1).value == nil)
        #expect(machine.valueReceived(2).effect == nil, "a value on its way when the subscriber left is dropped")
        #expect(machine.completed(.finished).completion == nil)
    }
}
