import SyncStreams
import Testing

@Suite struct FilterTests {
    @Test func emitsOnlyIncludedValuesInOrder() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.filter { $0 % 2 == 0 })
        for value in 1...6 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(2), .value(4), .value(6), .finished])
        token.invalidate()
    }

    @Test func passesFailureThroughEvenWhenNoValuePassed() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.filter { _ in false })
        subject.send(1)
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.failure(.boom)])
        token.invalidate()
    }

    @Test func invalidateEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).filter { _ in true })
        subject.send(1)
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send(2)
        #expect(recorder.events == [.value(1)])
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.filter { $0 > 1 }, invalidatingAfter: { _ in true })
        for value in 1...4 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(2)])
    }

    @Test func invalidationReleasesThePredicate() {
        let subject = PassthroughSubject<Int, Never>()
        expectInvalidationReleasesCaptures { canary in
            subject.filter { _ in
                canary.touch()
                return true
            }.subscribe { _ in }
        }
    }
}
