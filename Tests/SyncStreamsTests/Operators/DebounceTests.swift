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

    @Test func stateMachineKeepsOnlyTheNewestPendingValue() {
        var machine = DebounceStateMachine<Int>()
        guard case .restartTimer = machine.valueReceived(1), case .restartTimer = machine.valueReceived(2) else {
            Issue.record("value did not restart the timer")
            return
        }
        guard case .emit(2) = machine.timerFired() else { Issue.record("2 not emitted"); return }
        guard case .none = machine.timerFired() else { Issue.record("emitted twice"); return }
        _ = machine.valueReceived(3)
        guard case .complete(flushing: 3) = machine.completed() else { Issue.record("3 not flushed"); return }
        guard case .none = machine.valueReceived(4) else { Issue.record("value after completion"); return }
    }
}
