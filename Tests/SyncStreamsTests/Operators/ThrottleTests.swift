import Testing

@testable import SyncStreams

@Suite struct ThrottleTests {
    let interval = Marble.tick * 3

    func throttled(_ input: String, latest: Bool) -> [TimedEvent] {
        Marble.run(input) { subject, executor in subject.throttle(for: interval, on: executor, latest: latest) }
    }

    @Test func latestDeliversTheNewestValueAtEachWindowsEnd() {
        #expect(throttled("abc-------d-e-f|", latest: true) == Marble.parse("a--c------d--e-(f|)"))
    }

    @Test func firstDeliversTheFirstValueOfEachWindow() {
        #expect(throttled("abc-------d-e-f|", latest: false) == Marble.parse("a--b------d--e-(f|)"))
    }

    @Test func atMostOneValuePerIntervalUnderContinuousInput() {
        #expect(throttled("abcdefgh|", latest: true) == Marble.parse("a--d--g-(h|)"))
        #expect(throttled("abcdefgh|", latest: false) == Marble.parse("a--b--e-(h|)"))
    }

    @Test func aWindowEndingWithNothingHeldMakesTheStreamQuietAgain() {
        #expect(throttled("a-----b|", latest: true) == Marble.parse("a-----b|"))
        #expect(throttled("a--b-----c|", latest: true) == Marble.parse("a--b-----c|"))
    }

    @Test func aHeldValueIsDeliveredBeforeTheCompletion() {
        #expect(throttled("ab|", latest: true) == Marble.parse("a-(b|)"))
        #expect(throttled("abc|", latest: false) == Marble.parse("a--(b|)"))
    }

    @Test func aHeldValueIsDeliveredBeforeTheFailure() {
        #expect(throttled("ab#", latest: true) == Marble.parse("a-(b#)"))
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
        var machine = ThrottleStateMachine<Int>(latest: latest)
        guard case .emitAndOpenWindow(1) = machine.valueReceived(1) else { Issue.record("1 not emitted"); return }
        guard case .none = machine.valueReceived(2), case .none = machine.valueReceived(3) else {
            Issue.record("a held value was emitted"); return
        }
        guard case .emitAndOpenWindow(let held) = machine.windowEnded() else { Issue.record("nothing held"); return }
        #expect(held == expected)
        guard case .none = machine.windowEnded() else { Issue.record("the window did not end quietly"); return }
        guard case .emitAndOpenWindow(4) = machine.valueReceived(4) else { Issue.record("4 not emitted"); return }
        guard case .complete(flushing: nil) = machine.completed() else { Issue.record("wrong completion"); return }
        guard case .none = machine.completed() else { Issue.record("completed twice"); return }
    }
}
