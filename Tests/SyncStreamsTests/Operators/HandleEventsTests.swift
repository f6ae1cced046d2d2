import SyncStreams
import Testing

@Suite struct HandleEventsTests {
    /// A log shared by the side effects and the subscriber, to check their relative order.
    private final class Log: Sendable {
        private let box = LockedBox<[String]>([])
        var entries: [String] { box.value }
        func append(_ entry: String) { box.mutate { $0.append(entry) } }
    }

    @Test func runsEachSideEffectBeforePassingTheEventOn() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let log = Log()
        let stream = subject.tracked(by: tracker).handleEvents(
            receiveSubscription: { log.append("subscription, upstream subscribed: \(tracker.total.value)") },
            receiveOutput: { log.append("output \($0)") },
            receiveCompletion: { log.append("completion \($0)") },
            receiveCancel: { log.append("cancel") }
        )
        let token = stream.subscribe(
            onValue: { log.append("value \($0)") },
            onCompletion: { log.append("downstream completion \($0)") }
        )
        #expect(tracker.active.value == 1)
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        token.invalidate()
        #expect(
            log.entries == [
                "subscription, upstream subscribed: 0",
                "output 1", "value 1",
                "output 2", "value 2",
                "completion finished", "downstream completion finished",
            ])
    }

    @Test func passesEventsThroughUnchangedWithoutEffects() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: subject.handleEvents())
        subject.send(1)
        subject.send(completion: .failure(.boom))
        subject.send(2)
        #expect(recorder.events == [.value(1), .failure(.boom)])
        token.invalidate()
    }

    @Test func receiveCompletionSeesTheFailure() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let completions = LockedBox<[StreamCompletion<StreamTestError>]>([])
        let stream = subject.handleEvents(receiveCompletion: { completion in
            completions.mutate { $0.append(completion) }
        })
        let token = stream.subscribe(onValue: { _ in }, onCompletion: { _ in })
        subject.send(completion: .failure(.other))
        #expect(completions.value == [.failure(.other)])
        token.invalidate()
    }

    @Test func receiveCancelRunsOnceWhenInvalidatedBeforeCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        let cancels = AtomicCounter()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(
            to: subject.tracked(by: tracker).handleEvents(receiveCancel: { cancels.increment() }))
        subject.send(1)
        token.invalidate()
        token.invalidate()
        #expect(cancels.value == 1)
        #expect(tracker.active.value == 0)
        subject.send(2)
        #expect(recorder.events == [.value(1)])
    }

    @Test func receiveCancelRunsWhenTheLastTokenReferenceIsReleased() {
        let subject = PassthroughSubject<Int, Never>()
        let cancels = AtomicCounter()
        var token: SubscriptionToken? = subject.handleEvents(receiveCancel: { cancels.increment() }).subscribe { _ in }
        #expect(token?.isInvalidated == false)
        #expect(cancels.value == 0, "nothing cancels while the token is held")
        token = nil
        #expect(cancels.value == 1)
    }

    @Test func receiveCancelDoesNotRunAfterCompletion() {
        let subject = PassthroughSubject<Int, Never>()
        let cancels = AtomicCounter()
        let token = subject.handleEvents(receiveCancel: { cancels.increment() }).subscribe { _ in }
        subject.send(completion: .finished)
        token.invalidate()
        #expect(cancels.value == 0)
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherEvents() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let outputs = AtomicCounter()
        let cancels = AtomicCounter()
        let slot = TokenSlot()
        slot.token = subject.handleEvents(
            receiveOutput: { _ in outputs.increment() }, receiveCancel: { cancels.increment() }
        )
        .subscribe(
            onValue: { value in
                recorder.receive(value)
                slot.invalidate()
            },
            onCompletion: { recorder.receive(completion: $0) }
        )
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1)])
        #expect(outputs.value == 1)
        #expect(cancels.value == 1)
    }

    @Test func invalidationReleasesEveryClosure() {
        let subject = PassthroughSubject<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.handleEvents(
                receiveSubscription: { canary.touch() },
                receiveOutput: { _ in canary.touch() },
                receiveCompletion: { _ in canary.touch() },
                receiveCancel: { canary.touch() }
            ).subscribe { _ in canary.touch() }
        }
        subject.send(1)
        #expect(probe.isAlive)
        token?.invalidate()
        #expect(!probe.isAlive)
        token = nil
    }

    @Test func completionReleasesEveryClosureWhileTheTokenIsKept() {
        let subject = PassthroughSubject<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.handleEvents(
                receiveSubscription: { canary.touch() },
                receiveOutput: { _ in canary.touch() },
                receiveCompletion: { _ in canary.touch() },
                receiveCancel: { canary.touch() }
            ).subscribe { _ in canary.touch() }
        }
        subject.send(completion: .finished)
        #expect(!probe.isAlive, "after completion nothing of the subscription may stay alive")
        token?.invalidate()
        token = nil
    }
}
