import SyncStreams
import Testing

@Suite struct PrependTests {
    @Test func emitsThePrependedValuesDuringSubscribeThenTheUpstream() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prepend(1, 2))
        #expect(recorder.events == [.value(1), .value(2)])
        subject.send(3)
        subject.send(4)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .value(4), .finished])
        token.invalidate()
    }

    @Test func prependContentsOfASequence() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prepend(contentsOf: 1...3))
        subject.send(9)
        #expect(recorder.values == [1, 2, 3, 9])
        token.invalidate()
    }

    @Test func prependedValuesComeBeforeACurrentValue() {
        let subject = CurrentValueSubject<Int, Never>(10)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prepend(1, 2))
        subject.send(11)
        #expect(recorder.values == [1, 2, 10, 11])
        token.invalidate()
    }

    @Test func eachSubscriberReceivesThePrependedValues() {
        let subject = PassthroughSubject<Int, Never>()
        let stream = subject.prepend(0)
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: stream)
        subject.send(1)
        let secondToken = second.subscribe(to: stream)
        subject.send(2)
        #expect(first.values == [0, 1, 2])
        #expect(second.values == [0, 2])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func completionAndFailureComeFromTheUpstream() {
        let finished = PassthroughSubject<Int, StreamTestError>()
        finished.send(completion: .failure(.boom))
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: finished.prepend(7))
        #expect(recorder.events == [.value(7), .failure(.boom)])
        token.invalidate()
    }

    @Test func invalidateEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).prepend(1))
        #expect(tracker.active.value == 1)
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send(2)
        #expect(recorder.values == [1])
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.prepend(1), invalidatingAfter: { value in value == 2 })
        subject.send(2)
        subject.send(3)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2)])
    }
}
