import SyncStreams
import Testing

@Suite struct ScanTests {
    @Test func emitsEachPartialResultButNotTheInitialOne() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.scan(0, +))
        subject.send(1)
        subject.send(2)
        subject.send(3)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(3), .value(6), .finished])
        token.invalidate()
    }

    @Test func canChangeTheOutputType() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: subject.scan([Int]()) { $0 + [$1] })
        subject.send(4)
        subject.send(5)
        #expect(recorder.values == [[4], [4, 5]])
        token.invalidate()
    }

    @Test func eachSubscriptionHasItsOwnAccumulator() {
        let subject = PassthroughSubject<Int, Never>()
        let sums = subject.scan(100, +)
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: sums)
        subject.send(1)
        let secondToken = second.subscribe(to: sums)
        subject.send(2)
        #expect(first.values == [101, 103])
        #expect(second.values == [102])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func passesFailureThrough() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.scan(0, +))
        subject.send(2)
        subject.send(completion: .failure(.boom))
        subject.send(3)
        #expect(recorder.events == [.value(2), .failure(.boom)])
        token.invalidate()
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheClosure() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            recorder.subscribe(
                to: subject.tracked(by: tracker).scan(0) { total, value in
                    canary.touch()
                    return total + value
                })
        }
        subject.send(1)
        token?.invalidate()
        subject.send(2)
        #expect(tracker.active.value == 0)
        #expect(!probe.isAlive)
        #expect(recorder.events == [.value(1)])
        token = nil
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherValues() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.scan(0, +), invalidatingAfter: { value in value >= 3 })
        for value in 1...5 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(3)])
    }
}
