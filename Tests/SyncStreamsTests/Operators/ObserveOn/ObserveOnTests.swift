import Dispatch
import TestSupport
import Testing

@testable import SyncStreams

@Suite(.offPool) struct ObserveOnTests {
    @Test func deliversEveryEventOnTheExecutorInOrder() {
        let output = Marble.run("-a-b-c|") { subject, executor in subject.observe(on: executor) }
        #expect(output == Marble.parse("-a-b-c|"))
    }

    @Test func deliversAFailureAfterTheValues() {
        let output = Marble.run("-a(bc#)") { subject, executor in subject.observe(on: executor) }
        #expect(output == Marble.parse("-a(bc#)"))
    }

    @Test func nothingIsDeliveredUntilTheExecutorRuns() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.observe(on: executor))
        subject.send(1)
        subject.send(2)
        #expect(recorder.events.isEmpty)
        executor.advance(by: .zero)
        #expect(recorder.events == [.value(1), .value(2)])
        token.invalidate()
    }

    @Test func onTheImmediateExecutorEventsArriveDuringTheSendAndStopAtInvalidate() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.observe(on: ImmediateExecutor(), buffering: .latest))
        subject.send(1)
        #expect(recorder.events == [.value(1)])
        subject.send(2)
        #expect(recorder.events == [.value(1), .value(2)])  // nothing conflated: there is no queue
        token.invalidate()
        subject.send(3)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2)])
    }

    @Test func oneExecutorJobDrainsEverythingQueued() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.observe(on: executor))
        for value in 0..<100 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(executor.pendingCount == 1)
        executor.advance(by: .zero)
        #expect(recorder.values == Array(0..<100))
        #expect(recorder.events.last == .finished)
        #expect(executor.pendingCount == 0)
        token.invalidate()
    }

    @Test func unboundedDeliversEveryValueSentWhileTheSubscriberIsBusy() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = subject.observe(on: executor).subscribe { value in
            recorder.record(.value(value))
            if value == 1 { (2...4).forEach(subject.send) }
        }
        subject.send(1)
        executor.run()
        #expect(recorder.values == [1, 2, 3, 4])
        token.invalidate()
    }

    @Test func latestConflatesValuesNotYetDelivered() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.observe(on: executor, buffering: .latest))
        subject.send(1)
        subject.send(2)
        subject.send(3)
        #expect(executor.pendingCount == 1)
        executor.advance(by: .zero)
        #expect(recorder.values == [3])
        subject.send(4)
        executor.advance(by: .zero)
        subject.send(5)
        subject.send(6)
        subject.send(completion: .finished)
        executor.advance(by: .zero)
        #expect(recorder.events == [.value(3), .value(4), .value(6), .finished])
        token.invalidate()
    }

    @Test func latestNeverInterruptsTheValueBeingDeliveredAndKeepsTheNewest() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        // The subscriber is "busy" with 1 while 2, 3, 4 arrive: only 4 is delivered after it.
        let token = subject.observe(on: executor, buffering: .latest).subscribe { value in
            recorder.record(.value(value))
            if value == 1 { (2...4).forEach(subject.send) }
        }
        subject.send(1)
        executor.run()
        #expect(recorder.values == [1, 4])
        token.invalidate()
    }

    @Test func latestAlwaysDeliversTheCompletionAfterTheLastValue() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, MarbleError>()
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: subject.observe(on: executor, buffering: .latest))
        subject.send(1)
        subject.send(2)
        subject.send(completion: .failure(MarbleError()))
        executor.run()
        #expect(recorder.events == [.value(2), .failure(MarbleError())])
        token.invalidate()
    }

    @Test func subscribesUpstreamOnTheCallingThread() {
        let executor = TestExecutor()
        let subscribed = Locked(false)
        let stream = PassthroughSubject<Int, Never>()
            .handleEvents(receiveSubscription: { subscribed.withLock { $0 = true } })
        let token = stream.observe(on: executor).subscribe { _ in }
        #expect(subscribed.withLock { $0 })
        token.invalidate()
    }

    @Test func invalidateBeforeTheJobRunsDeliversNothingAndEndsTheUpstream() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let cancelled = Locked(false)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(
            to: subject.handleEvents(receiveCancel: { cancelled.withLock { $0 = true } }).observe(on: executor)
        )
        subject.send(1)
        subject.send(2)
        token.invalidate()
        #expect(cancelled.withLock { $0 })
        executor.run()
        #expect(recorder.events.isEmpty)
    }

    @Test func invalidateFromInsideTheCallbackStopsDelivery() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let box = Marble.TokenBox()
        box.token = subject.observe(on: executor).subscribe { value in
            recorder.record(.value(value))
            if value == 2 { box.invalidate() }
        }
        (1...5).forEach(subject.send)
        executor.run()
        #expect(recorder.values == [1, 2])
        subject.send(6)
        executor.run()
        #expect(recorder.values == [1, 2])
    }

    @Test func invalidateReleasesTheSubscriberAndTheRelay() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        var probe: Marble.Probe? = Marble.Probe()
        let weak = Marble.WeakBox(probe!)
        let token = subject.observe(on: executor).subscribe { [probe] _ in _ = probe }
        probe = nil
        subject.send(1)
        #expect(weak.object != nil)
        token.invalidate()
        executor.run()
        #expect(weak.object == nil)
    }

    @Test func realSerialQueueDeliversEveryValueInOrderOnTheQueue() {
        let queue = DispatchQueue(label: "ObserveOnTests.serial")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let subject = PassthroughSubject<Int, Never>()
        let received = Locked<[Int]>([])
        let offQueue = Locked(0)
        let done = DispatchSemaphore(value: 0)
        let count = 10_000
        let token = subject.observe(on: queue).subscribe(
            onValue: { value in
                if DispatchQueue.getSpecific(key: key) != 42 { offQueue.withLock { $0 += 1 } }
                received.withLock { $0.append(value) }
            },
            onCompletion: { _ in done.signal() }
        )
        for value in 0..<count { subject.send(value) }
        subject.send(completion: .finished)
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(received.withLock { $0 } == Array(0..<count))
        #expect(offQueue.withLock { $0 } == 0)
        token.invalidate()
    }

    @Test func realSerialQueueLatestEndsWithTheLastValue() {
        let queue = DispatchQueue(label: "ObserveOnTests.latest")
        let subject = PassthroughSubject<Int, Never>()
        let received = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let token = subject.observe(on: queue, buffering: .latest).subscribe(
            onValue: { value in received.withLock { $0.append(value) } },
            onCompletion: { _ in done.signal() }
        )
        for value in 0..<10_000 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        let values = received.withLock { $0 }
        #expect(values.last == 9_999)
        #expect(values == values.sorted())
        token.invalidate()
    }

    @Test func invalidateOnAnotherThreadWaitsForTheCallbackInFlightOnTheExecutor() {
        let queue = DispatchQueue(label: "ObserveOnTests.inflight")
        let subject = PassthroughSubject<Int, Never>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let callbackReturned = AtomicFlag()
        let calls = AtomicCounter()
        let token = subject.observe(on: queue).subscribe { value in
            calls.increment()
            guard value == 0 else { return }
            entered.signal()
            _ = release.waitWithDeadline()
            callbackReturned.set()
        }
        for value in 0..<1_000 { subject.send(value) }
        #expect(entered.waitWithDeadline())
        let invalidatorThread = LockedBox<ThreadID?>(nil)
        let returnedEarly = AtomicFlag()
        let invalidator = startThread {
            invalidatorThread.value = ThreadID.current
            token.invalidate()
            if !callbackReturned.isSet { returnedEarly.set() }
        }
        #expect(eventually { invalidatorThread.value.map(RelayWaitObserver.isWaiting) ?? false })
        release.signal()
        #expect(invalidator.waitWithDeadline())
        queue.sync {}
        #expect(!returnedEarly.isSet, "invalidate() returned while the callback ran")
        #expect(calls.value == 1, "a callback started after invalidate() returned")
    }
}
