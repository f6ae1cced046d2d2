import SyncStreams
import Testing

@Suite struct MapTests {
    @Test func transformsEachValueInOrder() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(to: subject.map { "#\($0 * 10)" })
        subject.send(1)
        subject.send(2)
        subject.send(3)
        #expect(recorder.events == [.value("#10"), .value("#20"), .value("#30")])
        token.invalidate()
    }

    @Test func passesCompletionThrough() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.map { $0 + 1 })
        subject.send(1)
        subject.send(completion: .finished)
        subject.send(2)
        #expect(recorder.events == [.value(2), .finished])
        token.invalidate()
    }

    @Test func passesFailureThrough() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.map { $0 * 2 })
        subject.send(4)
        subject.send(completion: .failure(.boom))
        subject.send(5)
        #expect(recorder.events == [.value(8), .failure(.boom)])
        token.invalidate()
    }

    @Test func invalidateStopsValuesAndEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).map { $0 * 3 })
        subject.send(1)
        #expect(tracker.active.value == 1)
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send(2)
        #expect(recorder.events == [.value(3)])
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.map { $0 * 10 }, invalidatingAfter: { value in value == 20 })
        subject.send(1)
        subject.send(2)
        subject.send(3)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(10), .value(20)])
    }

    @Test func invalidationAndCompletionReleaseTheTransform() {
        let subject = PassthroughSubject<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.map { value -> Int in
                canary.touch()
                return value
            }.subscribe { _ in canary.touch() }
        }
        #expect(probe.isAlive)
        subject.send(completion: .finished)
        #expect(!probe.isAlive, "completion must release the closures even while the token is kept")
        token?.invalidate()
        token = nil
    }
}
