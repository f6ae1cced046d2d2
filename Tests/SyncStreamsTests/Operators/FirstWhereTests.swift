import SyncStreams
import Testing

@Suite struct FirstWhereTests {
    @Test func emitsTheFirstMatchingValueThenFinishes() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.first(where: { $0 > 3 }))
        subject.send(1)
        subject.send(4)
        subject.send(6)
        #expect(recorder.events == [.value(4), .finished])
        token.invalidate()
    }

    @Test func finishesEmptyWhenTheUpstreamFinishesFirst() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.first(where: { $0 > 3 }))
        subject.send(1)
        subject.send(completion: .finished)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func passesFailureThrough() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.first(where: { $0 > 3 }))
        subject.send(1)
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.failure(.boom)])
        token.invalidate()
    }

    @Test func findingTheValueEndsTheUpstreamSubscriptionAndReleasesTheClosures() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.tracked(by: tracker).first(where: { value in
                canary.touch()
                return value == 2
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

    @Test func matchingCurrentValueDeliveredDuringSubscribe() {
        let subject = CurrentValueSubject<Int, Never>(8)
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).first(where: { $0 > 3 }))
        #expect(recorder.events == [.value(8), .finished])
        #expect(tracker.active.value == 0)
        token.invalidate()
    }

    @Test func reentrantInvalidateInTheValueCallbackSuppressesTheCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.first(where: { $0 == 2 }), invalidatingAfter: { _ in true })
        subject.send(1)
        subject.send(2)
        subject.send(2)
        #expect(recorder.events == [.value(2)], "no completion after the subscriber invalidated")
    }

    @Test func invalidateEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).first(where: { $0 > 100 }))
        subject.send(1)
        token.invalidate()
        #expect(tracker.active.value == 0)
        subject.send(200)
        #expect(recorder.events == [])
    }
}
