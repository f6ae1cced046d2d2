import Dispatch
import TestSupport
import Testing

@testable import SyncStreams

@Suite(.offPool) struct SubscribeOnTests {
    /// A subject with subscription and cancellation counters.
    struct Observed {
        let subject = PassthroughSubject<Int, MarbleError>()
        let subscriptions = Locked(0)
        let cancels = Locked(0)

        var stream: Streams.HandleEvents<PassthroughSubject<Int, MarbleError>> {
            subject.handleEvents(
                receiveSubscription: { [subscriptions] in subscriptions.withLock { $0 += 1 } },
                receiveCancel: { [cancels] in cancels.withLock { $0 += 1 } }
            )
        }
    }

    @Test func subscribesOnTheExecutorAndPassesEventsThroughAsTheUpstreamDelivers() {
        let executor = TestExecutor()
        let upstream = Observed()
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: upstream.stream.subscribe(on: executor))
        #expect(upstream.subscriptions.withLock { $0 } == 0)
        executor.advance(by: .zero)
        #expect(upstream.subscriptions.withLock { $0 } == 1)
        upstream.subject.send(1)
        upstream.subject.send(2)
        #expect(recorder.values == [1, 2])
        upstream.subject.send(completion: .failure(MarbleError()))
        #expect(recorder.events == [.value(1), .value(2), .failure(MarbleError())])
        token.invalidate()
    }

    @Test func marble() {
        #expect(Marble.run("-a-b|") { $0.subscribe(on: $1) } == Marble.parse("-a-b|"))
    }

    @Test func invalidationEndsTheUpstreamOnTheExecutorAndNothingIsDeliveredMeanwhile() {
        let executor = TestExecutor()
        let upstream = Observed()
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: upstream.stream.subscribe(on: executor))
        executor.advance(by: .zero)
        upstream.subject.send(1)
        token.invalidate()
        #expect(upstream.cancels.withLock { $0 } == 0)
        upstream.subject.send(2)
        #expect(recorder.events == [.value(1)])
        executor.advance(by: .zero)
        #expect(upstream.cancels.withLock { $0 } == 1)
    }

    @Test func invalidateBeforeTheSubscribeJobRanNeverSubscribes() {
        let executor = TestExecutor()
        let upstream = Observed()
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: upstream.stream.subscribe(on: executor))
        token.invalidate()
        executor.run()
        #expect(upstream.subscriptions.withLock { $0 } == 0)
        upstream.subject.send(1)
        #expect(recorder.events.isEmpty)
    }

    @Test func invalidateFromInsideTheCallback() {
        let executor = TestExecutor()
        let upstream = Observed()
        let recorder = Recorder<Int, MarbleError>()
        let box = Marble.TokenBox()
        box.token = upstream.stream.subscribe(on: executor).subscribe(
            onValue: { value in
                recorder.record(.value(value))
                box.invalidate()
                upstream.subject.send(value + 1)
            },
            onCompletion: { _ in }
        )
        executor.run()
        upstream.subject.send(1)
        executor.run()
        #expect(recorder.values == [1])
        #expect(upstream.cancels.withLock { $0 } == 1)
    }

    @Test func invalidateReleasesTheSubscriber() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        var probe: Marble.Probe? = Marble.Probe()
        let weak = Marble.WeakBox(probe!)
        let token = subject.subscribe(on: executor).subscribe { [probe] _ in _ = probe }
        probe = nil
        executor.run()
        token.invalidate()
        executor.run()
        #expect(weak.object == nil)
    }

    @Test func subscribesOnARealQueue() {
        let queue = DispatchQueue(label: "SubscribeOnTests.queue")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let onQueue = Locked<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        let stream = AnySyncStream<Int, Never> { onValue, onCompletion in
            onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 7) }
            onValue(1)
            onCompletion(.finished)
            return SubscriptionToken(onInvalidate: {
                onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 7) }
                done.signal()
            })
        }
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: stream.subscribe(on: queue))
        queue.sync {}
        #expect(recorder.events == [.value(1), .finished])
        token.invalidate()
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(onQueue.withLock { $0 } == [true, true])
    }
}
