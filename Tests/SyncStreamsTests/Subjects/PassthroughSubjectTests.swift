import SyncStreams
import Testing

@Suite struct PassthroughSubjectTests {
    @Test func deliversValuesSentAfterSubscribingThenCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        subject.send(0)
        let token = recorder.subscribe(to: subject.map { $0 * 10 }.filter { $0 != 20 })
        subject.send(1)
        subject.send(2)
        subject.send(3)
        subject.send(completion: .finished)
        subject.send(4)
        #expect(recorder.events == [.value(10), .value(30), .finished])
        token.invalidate()
    }

    @Test func valuesAreDeliveredSynchronouslyDuringSend() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject)
        subject.send(1)
        #expect(recorder.values == [1])
        subject.send(2)
        #expect(recorder.values == [1, 2])
        token.invalidate()
    }

    @Test func everySubscriberReceivesEveryValueInOrder() {
        let subject = PassthroughSubject<Int, Never>()
        let recorders = (0..<3).map { _ in Recorder<Int, Never>() }
        let tokens = recorders.map { $0.subscribe(to: subject) }
        for value in 1...5 { subject.send(value) }
        subject.send(completion: .finished)
        for recorder in recorders {
            #expect(recorder.events == [.value(1), .value(2), .value(3), .value(4), .value(5), .finished])
        }
        for token in tokens { token.invalidate() }
    }

    @Test func failureIsDeliveredOnceAndEndsTheStream() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject)
        subject.send(1)
        subject.send(completion: .failure(.boom))
        subject.send(completion: .failure(.other))
        subject.send(completion: .finished)
        subject.send(2)
        #expect(recorder.events == [.value(1), .failure(.boom)])
        token.invalidate()
    }

    @Test func onlyTheFirstCompletionCounts() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject)
        subject.send(completion: .finished)
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func aSubscriberAfterCompletionReceivesOnlyTheCompletion() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        subject.send(1)
        subject.send(completion: .failure(.boom))
        subject.send(2)
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject)
        #expect(recorder.events == [.failure(.boom)])
        token.invalidate()
    }

    @Test func invalidatedSubscriberReceivesNothingMoreWhileOthersContinue() {
        let subject = PassthroughSubject<Int, Never>()
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: subject)
        let secondToken = second.subscribe(to: subject)
        subject.send(1)
        firstToken.invalidate()
        subject.send(2)
        subject.send(completion: .finished)
        #expect(first.events == [.value(1)])
        #expect(second.events == [.value(1), .value(2), .finished])
        secondToken.invalidate()
    }

    @Test func voidSubjectSendsWithoutArgument() {
        let subject = PassthroughSubject<Void, Never>()
        let count = AtomicCounter()
        let token = subject.subscribe { count.increment() }
        subject.send()
        subject.send()
        #expect(count.value == 2)
        token.invalidate()
    }

    @Test func sendWithoutSubscribersIsHarmless() {
        let subject = PassthroughSubject<Int, Never>()
        subject.send(1)
        subject.send(completion: .finished)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject)
        #expect(recorder.events == [.finished])
        token.invalidate()
    }

    @Test func completionReleasesTheSubscribersClosuresWhileTheTokenIsKept() {
        let subject = PassthroughSubject<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.subscribe(onValue: { _ in canary.touch() }, onCompletion: { _ in canary.touch() })
        }
        subject.send(1)
        #expect(probe.isAlive)
        subject.send(completion: .finished)
        #expect(!probe.isAlive)
        token?.invalidate()
        token = nil
    }

    @Test func invalidationReleasesTheSubscribersClosures() {
        let subject = PassthroughSubject<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.subscribe(onValue: { _ in canary.touch() }, onCompletion: { _ in canary.touch() })
        }
        #expect(probe.isAlive)
        token?.invalidate()
        #expect(!probe.isAlive)
        token = nil
    }

    @Test func releasingTheSubjectWithLiveSubscribersLeaksNothing() {
        weak var weakSubject: PassthroughSubject<Int, Never>?
        weak var weakCanary: LifetimeCanary?
        var token: SubscriptionToken?
        do {
            let subject = PassthroughSubject<Int, Never>()
            weakSubject = subject
            let canary = LifetimeCanary()
            weakCanary = canary
            token = subject.subscribe { _ in canary.touch() }
            subject.send(1)
        }
        token?.invalidate()
        token = nil
        #expect(weakSubject == nil)
        #expect(weakCanary == nil)
    }
}
