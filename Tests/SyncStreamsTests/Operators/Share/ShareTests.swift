import SyncStreams
import TestSupport
import Testing

@Suite struct ShareTests {
    @Test func oneUpstreamSubscriptionForAllSubscribers() {
        let subject = PassthroughSubject<Int, Never>()
        let subscriptions = Recorder<Int, Never>()
        let shared = subject.handleEvents(receiveSubscription: { subscriptions.record(.value(1)) }).share()
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: shared)
        subject.send(1)
        let secondToken = second.subscribe(to: shared)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(first.events == [.value(1), .value(2), .finished])
        #expect(second.events == [.value(2), .finished])
        #expect(subscriptions.values.count == 1)
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func lastInvalidationEndsTheConnectionAndTheNextSubscriberReconnects() {
        let subject = PassthroughSubject<Int, Never>()
        let cancels = Recorder<Int, Never>()
        let subscriptions = Recorder<Int, Never>()
        let shared = subject.handleEvents(
            receiveSubscription: { subscriptions.record(.value(1)) },
            receiveCancel: { cancels.record(.value(1)) }
        ).share()
        let a = Recorder<Int, Never>()
        let b = Recorder<Int, Never>()
        let tokenA = a.subscribe(to: shared)
        let tokenB = b.subscribe(to: shared)
        tokenA.invalidate()
        #expect(cancels.values.isEmpty)
        subject.send(1)
        tokenB.invalidate()
        #expect(cancels.values.count == 1)
        #expect(!subject.hasSubscribers)
        let c = Recorder<Int, Never>()
        let tokenC = c.subscribe(to: shared)
        subject.send(2)
        #expect(subscriptions.values.count == 2)
        #expect(a.values.isEmpty)
        #expect(b.values == [1])
        #expect(c.values == [2])
        tokenC.invalidate()
    }

    @Test func replayDeliversTheLastValuesToLateSubscribers() {
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.share(replay: 2)
        let early = Recorder<Int, Never>()
        let late = Recorder<Int, Never>()
        let earlyToken = early.subscribe(to: shared)
        subject.send(1)
        subject.send(2)
        subject.send(3)
        let lateToken = late.subscribe(to: shared)
        subject.send(4)
        #expect(early.values == [1, 2, 3, 4])
        #expect(late.values == [2, 3, 4])
        earlyToken.invalidate()
        lateToken.invalidate()
    }

    @Test func aSubscriberAfterTheUpstreamCompletedGetsTheCompletionWithoutReconnecting() {
        let subject = CurrentValueSubject<Int, Never>(7)
        let subscriptions = AtomicCounter()
        let shared = subject.handleEvents(receiveSubscription: { _ = subscriptions.increment() }).prefix(2).share()
        let first = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: shared)
        subject.send(8)
        #expect(first.events == [.value(7), .value(8), .finished])
        let second = Recorder<Int, Never>()
        let secondToken = second.subscribe(to: shared)
        #expect(second.events == [.finished], "a late subscriber gets the completion (as Combine's share())")
        #expect(subscriptions.value == 1, "the upstream was subscribed to again after it completed")
        firstToken.invalidate()
        secondToken.invalidate()
        let third = Recorder<Int, Never>()
        third.subscribe(to: shared).invalidate()
        #expect(third.events == [.finished])
        #expect(subscriptions.value == 1)
    }

    @Test func aSubscriberAfterAFailureGetsTheFailure() {
        let subject = PassthroughSubject<Int, MarbleError>()
        let shared = subject.share()
        let first = Recorder<Int, MarbleError>()
        let firstToken = first.subscribe(to: shared)
        subject.send(completion: .failure(MarbleError()))
        let late = Recorder<Int, MarbleError>()
        let lateToken = late.subscribe(to: shared)
        #expect(late.events == [.failure(MarbleError())])
        firstToken.invalidate()
        lateToken.invalidate()
    }

    @Test func aSubscriberAfterTheCompletionGetsTheReplayThenTheCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.share(replay: 2)
        let first = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: shared)
        for value in 1...3 { subject.send(value) }
        subject.send(completion: .finished)
        let late = Recorder<Int, Never>()
        let lateToken = late.subscribe(to: shared)
        #expect(late.events == [.value(2), .value(3), .finished])
        firstToken.invalidate()
        lateToken.invalidate()
    }

    @Test func aSubscriberJoiningDuringTheCompletionGetsTheReplayThenTheCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.share(replay: 1)
        let joiner = Recorder<Int, Never>()
        let joinerToken = TokenSlot()
        let firstToken = shared.subscribe(
            onValue: { _ in },
            onCompletion: { _ in joinerToken.token = joiner.subscribe(to: shared) }  // joins re-entrantly
        )
        subject.send(1)
        subject.send(completion: .finished)
        #expect(joiner.events == [.value(1), .finished])
        firstToken.invalidate()
        joinerToken.invalidate()
    }

    @Test func invalidationReleasesCapturedObjects() {
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.share(replay: 1)
        weak var weakCaptured: Captured?
        var token: SubscriptionToken?
        do {
            let captured = Captured()
            weakCaptured = captured
            token = shared.subscribe { _ in captured.touch() }
        }
        subject.send(1)
        #expect(weakCaptured != nil)
        #expect(token?.isInvalidated == false)
        token = nil
        #expect(weakCaptured == nil)
        #expect(!subject.hasSubscribers)
    }
}

@Suite struct ShareMisuseTests {
    @Test func negativeReplayCountActsAsZero() {
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.share(replay: -3)
        let early = Recorder<Int, Never>()
        let late = Recorder<Int, Never>()
        let earlyToken = early.subscribe(to: shared)
        subject.send(1)
        let lateToken = late.subscribe(to: shared)
        subject.send(2)
        #expect(early.values == [1, 2])
        #expect(late.values == [2])
        earlyToken.invalidate()
        lateToken.invalidate()
    }
}

@Suite struct ShareReentrancyTests {
    @Test func subscriberInvalidatingItselfAndSendingFromItsCallback() {
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.share()
        let holder = TokenHolder()
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        holder.token = shared.subscribe { value in
            first.record(.value(value))
            if value == 1 {
                subject.send(2)  // re-entrant: delivered after 1 reached every subscriber
                holder.token?.invalidate()  // so this subscriber never sees 2
            }
        }
        let secondToken = second.subscribe(to: shared)
        subject.send(1)
        #expect(first.values == [1])
        #expect(second.values == [1, 2])
        secondToken.invalidate()
        #expect(!subject.hasSubscribers)
    }
}

/// Subscribers racing the upstream's completion from other threads (blocking waits: off the pool).
@Suite(.offPool) struct ShareConcurrencyTests {
    @Test func aSubscriberRacingTheCompletionGetsTheReplayThenTheCompletion() {
        let rounds = BuildFlavor.iterations(500, sanitized: 100)
        for round in 0..<rounds {
            let subject = PassthroughSubject<Int, Never>()
            let shared = subject.share(replay: 1)
            let first = Recorder<Int, Never>()
            let firstToken = first.subscribe(to: shared)
            subject.send(round)
            let racer = Recorder<Int, Never>()
            let racerToken = TokenSlot()
            let finished = runOnThreads(2) { index in
                if index == 0 {
                    subject.send(completion: .finished)
                } else {
                    racerToken.token = racer.subscribe(to: shared)
                }
            }
            #expect(finished)
            #expect(eventually { racer.isCompleted })
            #expect(racer.events == [.value(round), .finished], "round \(round)")
            firstToken.invalidate()
            racerToken.invalidate()
            if racer.events != [.value(round), .finished] { break }
        }
    }
}
