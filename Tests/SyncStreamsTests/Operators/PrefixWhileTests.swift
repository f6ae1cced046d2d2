import SyncStreams
import Testing

@Suite struct PrefixWhileTests {
    @Test func emitsWhileThePredicateHoldsThenFinishesWithoutTheFailingValue() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prefix(while: { $0 < 3 }))
        subject.send(1)
        subject.send(2)
        subject.send(5)
        subject.send(1)
        #expect(recorder.events == [.value(1), .value(2), .finished])
        token.invalidate()
    }

    @Test func finishesAtOnceWhenTheFirstValueFails() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prefix(while: { $0 < 0 }))
        subject.send(1)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func earlierUpstreamCompletionAndFailurePassThrough() {
        let finishing = PassthroughSubject<Int, StreamTestError>()
        let failing = PassthroughSubject<Int, StreamTestError>()
        let finished = Recorder<Int, StreamTestError>()
        let failed = Recorder<Int, StreamTestError>()
        let tokens = [
            finished.subscribe(to: finishing.prefix(while: { _ in true })),
            failed.subscribe(to: failing.prefix(while: { _ in true })),
        ]
        finishing.send(1)
        finishing.send(completion: .finished)
        failing.send(2)
        failing.send(completion: .failure(.boom))
        #expect(finished.events == [.value(1), .finished])
        #expect(failed.events == [.value(2), .failure(.boom)])
        for token in tokens { token.invalidate() }
    }

    @Test func finishingEndsTheUpstreamSubscriptionAndReleasesTheClosures() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.tracked(by: tracker).prefix(while: { value in
                canary.touch()
                return value < 2
            }).subscribe { _ in canary.touch() }
        }
        subject.send(1)
        #expect(tracker.active.value == 1)
        subject.send(2)
        #expect(tracker.active.value == 0)
        #expect(!probe.isAlive)
        token?.invalidate()
        token = nil
    }

    @Test func invalidateEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).prefix(while: { _ in true }))
        subject.send(1)
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1)])
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsEverything() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.prefix(while: { $0 < 10 }), invalidatingAfter: { value in value == 2 })
        subject.send(1)
        subject.send(2)
        subject.send(3)
        subject.send(20)
        #expect(recorder.events == [.value(1), .value(2)])
    }
}
