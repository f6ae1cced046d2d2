import SyncStreams
import Testing

@Suite struct PrefixTests {
    @Test func emitsTheFirstValuesThenFinishes() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prefix(2))
        subject.send(1)
        #expect(recorder.events == [.value(1)])
        subject.send(2)
        #expect(recorder.events == [.value(1), .value(2), .finished])
        subject.send(3)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2), .finished])
        token.invalidate()
    }

    @Test func zeroFinishesAtOnceWithoutSubscribingUpstream() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).prefix(0))
        #expect(recorder.events == [.finished])
        #expect(tracker.total.value == 0)
        subject.send(1)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func earlierUpstreamCompletionPassesThrough() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prefix(5))
        subject.send(1)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1), .finished])
        token.invalidate()
    }

    @Test func earlierUpstreamFailurePassesThrough() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.prefix(5))
        subject.send(1)
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(1), .failure(.boom)])
        token.invalidate()
    }

    @Test func reachingTheCountEndsTheUpstreamSubscriptionAndReleasesTheClosures() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.tracked(by: tracker).prefix(1).subscribe { _ in canary.touch() }
        }
        #expect(tracker.active.value == 1)
        subject.send(1)
        #expect(tracker.active.value == 0, "prefix must end its upstream subscription when it finishes")
        #expect(!probe.isAlive, "the finished subscription must release its closures while the token is kept")
        token?.invalidate()
        token = nil
    }

    @Test func valueDeliveredDuringSubscribeCompletesAndEndsTheUpstream() {
        let subject = CurrentValueSubject<Int, Never>(5)
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).prefix(1))
        #expect(recorder.events == [.value(5), .finished])
        #expect(tracker.active.value == 0)
        subject.send(6)
        #expect(recorder.events == [.value(5), .finished])
        token.invalidate()
    }

    @Test func reentrantInvalidateInTheLastValueCallbackSuppressesTheCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.prefix(2), invalidatingAfter: { value in value == 2 })
        subject.send(1)
        subject.send(2)
        subject.send(3)
        #expect(recorder.events == [.value(1), .value(2)], "no completion after the subscriber invalidated")
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheClosures() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.tracked(by: tracker).prefix(10).subscribe(
                onValue: { value in
                    canary.touch()
                    recorder.receive(value)
                },
                onCompletion: { recorder.receive(completion: $0) }
            )
        }
        subject.send(1)
        token?.invalidate()
        #expect(tracker.active.value == 0)
        #expect(!probe.isAlive)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1)])
        token = nil
    }

    @Test func eachSubscriptionCountsSeparately() {
        let subject = PassthroughSubject<Int, Never>()
        let stream = subject.prefix(2)
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: stream)
        subject.send(1)
        let secondToken = second.subscribe(to: stream)
        subject.send(2)
        subject.send(3)
        #expect(first.events == [.value(1), .value(2), .finished])
        #expect(second.events == [.value(2), .value(3), .finished])
        firstToken.invalidate()
        secondToken.invalidate()
    }
}

@Suite struct PrefixMisuseTests {
    @Test func negativeLengthFinishesAtOnceWithoutSubscribing() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.prefix(-1))
        subject.send(1)
        #expect(recorder.events == [.finished])
        #expect(!subject.hasSubscribers)
        token.invalidate()
    }
}
