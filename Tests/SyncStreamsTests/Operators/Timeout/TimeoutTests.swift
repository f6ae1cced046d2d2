import Testing

@testable import SyncStreams

@Suite struct TimeoutTests {
    let interval = Marble.tick * 3

    @Test func finishesAfterAnIntervalWithoutValues() {
        let output = Marble.run("a-b----c|") { subject, executor in subject.timeout(interval, on: executor) }
        #expect(output == Marble.parse("a-b--|"))
    }

    @Test func failsWithTheCustomError() {
        let output = Marble.run("a-b----c|") { subject, executor in
            subject.timeout(interval, on: executor, customError: { MarbleError() })
        }
        #expect(output == Marble.parse("a-b--#"))
    }

    @Test func theClockStartsAtSubscription() {
        let output = Marble.run("------a|") { subject, executor in subject.timeout(interval, on: executor) }
        #expect(output == Marble.parse("---|"))
    }

    @Test func aValueExactlyAtTheDeadlineRestartsTheClock() {
        let output = Marble.run("---a-----|") { subject, executor in subject.timeout(interval, on: executor) }
        #expect(output == Marble.parse("---a--|"))
    }

    @Test func upstreamCompletionsPassThroughAndCancelTheTimer() {
        #expect(Marble.run("a-|") { $0.timeout(interval, on: $1) } == Marble.parse("a-|"))
        #expect(Marble.run("a#") { $0.timeout(interval, on: $1) } == Marble.parse("a#"))
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.timeout(.seconds(1), on: executor))
        #expect(executor.pendingCount == 1)
        subject.send(completion: .finished)
        #expect(executor.pendingCount == 0)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func valuesPassThroughAtOnceAndTheTimerIsNotRescheduledPerValue() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.timeout(.seconds(1), on: executor))
        executor.advance(by: .milliseconds(400))
        subject.send(1)
        #expect(recorder.values == [1])
        subject.send(2)
        executor.advance(by: .milliseconds(600))
        #expect(executor.scheduledDelays == [.seconds(1), .milliseconds(400)])
        executor.advance(by: .milliseconds(399))
        #expect(recorder.events == [.value(1), .value(2)])
        executor.advance(by: .milliseconds(1))
        #expect(recorder.events == [.value(1), .value(2), .finished])
        token.invalidate()
    }

    @Test func timingOutEndsTheUpstream() {
        let executor = TestExecutor()
        let cancelled = Locked(false)
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let stream = subject.handleEvents(receiveCancel: { cancelled.withLock { $0 = true } })
            .timeout(.seconds(1), on: executor)
        let token = recorder.subscribe(to: stream)
        executor.advance(by: .seconds(1))
        #expect(cancelled.withLock { $0 })
        subject.send(1)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func invalidateCancelsTheTimerAndReleasesEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        var probe: Marble.Probe? = Marble.Probe()
        let weak = Marble.WeakBox(probe!)
        let completed = Locked(false)
        let token = subject.timeout(.seconds(1), on: executor).subscribe(
            onValue: { [probe] _ in _ = probe },
            onCompletion: { _ in completed.withLock { $0 = true } }
        )
        probe = nil
        #expect(executor.pendingCount == 1)
        token.invalidate()
        #expect(executor.pendingCount == 0)
        #expect(weak.object == nil)
        executor.run()
        #expect(!completed.withLock { $0 })
    }

    @Test func invalidateFromInsideTheCallbackStopsEverything() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let box = Marble.TokenBox()
        box.token = subject.timeout(.seconds(1), on: executor).subscribe { value in
            recorder.record(.value(value))
            box.invalidate()
            subject.send(value + 10)
        }
        subject.send(1)
        subject.send(2)
        executor.run()
        #expect(recorder.events == [.value(1)])
        #expect(executor.pendingCount == 0)
    }
}
