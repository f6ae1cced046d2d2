import SyncStreams
import Testing

@Suite struct RemoveDuplicatesTests {
    @Test func dropsValuesEqualToThePreviousOne() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.removeDuplicates())
        for value in [1, 1, 2, 2, 1, 1, 3] { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2), .value(1), .value(3), .finished])
        token.invalidate()
    }

    @Test func byComparesWithTheLastEmittedValue() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        // A value is a duplicate when it is within 2 of the last *emitted* value: 1, (2), (3) -> 3 is 2 away
        // from 1 (the last emitted), so dropped; 4 is 3 away, so emitted.
        let token = recorder.subscribe(to: subject.removeDuplicates(by: { abs($0 - $1) <= 2 }))
        for value in [1, 2, 3, 4, 5, 9] { subject.send(value) }
        #expect(recorder.values == [1, 4, 9])
        token.invalidate()
    }

    @Test func byReceivesPreviousThenCurrent() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        // Duplicate when the new value is not greater than the previous one: keeps a rising sequence.
        let token = recorder.subscribe(to: subject.removeDuplicates(by: { previous, current in current <= previous }))
        for value in [1, 0, 2, 2, 5, 3, 6] { subject.send(value) }
        #expect(recorder.values == [1, 2, 5, 6])
        token.invalidate()
    }

    @Test func eachSubscriptionHasItsOwnPreviousValue() {
        let subject = PassthroughSubject<Int, Never>()
        let stream = subject.removeDuplicates()
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: stream)
        subject.send(1)
        let secondToken = second.subscribe(to: stream)
        subject.send(1)
        subject.send(2)
        #expect(first.values == [1, 2])
        #expect(second.values == [1, 2])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func passesFailureThrough() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.removeDuplicates())
        subject.send(1)
        subject.send(1)
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(1), .failure(.boom)])
        token.invalidate()
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheClosure() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            recorder.subscribe(
                to: subject.tracked(by: tracker).removeDuplicates(by: { lhs, rhs in
                    canary.touch()
                    return lhs == rhs
                }))
        }
        subject.send(1)
        subject.send(1)
        token?.invalidate()
        #expect(tracker.active.value == 0)
        #expect(!probe.isAlive)
        subject.send(2)
        #expect(recorder.events == [.value(1)])
        token = nil
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.removeDuplicates(), invalidatingAfter: { value in value == 2 })
        for value in [1, 2, 3] { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2)])
    }
}
