import TestSupport
import Testing

@testable import SyncStreams

@Suite(.offPool) struct CollectTests {
    /// An event at `tick` marble ticks; a collected array is written as its values joined (`"abc"`).
    private func at(_ tick: Int, _ event: RecordedEvent<String, MarbleError>) -> TimedEvent {
        TimedEvent(time: Marble.tick * tick, event: event)
    }

    @Test func emitsEveryValueAsOneArrayWhenTheUpstreamFinishes() {
        let output = Marble.run("a-bc-|") { subject, _ in subject.collect().map { $0.joined() } }
        #expect(output == [at(5, .value("abc")), at(5, .finished)])
    }

    @Test func anUpstreamThatFinishesWithoutValuesGivesAnEmptyArray() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: subject.collect())
        subject.send(completion: .finished)
        #expect(recorder.events == [.value([]), .finished])
        token.invalidate()
    }

    @Test func aFailureIsForwardedAndNothingIsEmitted() {
        let output = Marble.run("ab-#") { subject, _ in subject.collect().map { $0.joined() } }
        #expect(output == [at(3, .failure(MarbleError()))])
    }

    @Test func eachSubscriptionCollectsSeparately() {
        let subject = PassthroughSubject<Int, Never>()
        let collected = subject.collect()
        let first = Recorder<[Int], Never>()
        let second = Recorder<[Int], Never>()
        let firstToken = first.subscribe(to: collected)
        subject.send(1)
        let secondToken = second.subscribe(to: collected)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(first.events == [.value([1, 2]), .finished])
        #expect(second.events == [.value([2]), .finished])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func reentrantInvalidateInsideTheArrayCallbackSuppressesFinished() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        recorder.subscribe(to: subject.collect(), invalidatingAfter: { _ in true })
        subject.send(1)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value([1])], "no completion after the subscriber invalidated")
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheValuesCollectedSoFar() {
        let subject = PassthroughSubject<LifetimeCanary, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).collect().map(\.count))
        let probe = LifetimeProbe()
        _ = probe.capture { canary in
            subject.send(canary)
            return .empty
        }
        #expect(probe.isAlive, "the collected value is kept until the upstream finishes")
        token.invalidate()
        #expect(!probe.isAlive)
        #expect(tracker.active.value == 0)
        subject.send(completion: .finished)
        #expect(recorder.events.isEmpty)
    }

    @Test func afterEmittingTheArrayNothingOfItIsKept() {
        let recorder = Recorder<Int, Never>()
        let probe = LifetimeProbe()
        let token = probe.capture { canary in
            // An upstream that keeps its subscriber's callbacks until invalidated, as a stream may: only
            // the operator itself can let go of the values it collected.
            let upstream = AnySyncStream<LifetimeCanary, Never> { onValue, onCompletion in
                onValue(canary)
                onCompletion(.finished)
                return SubscriptionToken { _ = (onValue, onCompletion) }
            }
            return recorder.subscribe(to: upstream.collect().map(\.count))
        }
        #expect(recorder.events == [.value(1), .finished])
        #expect(!probe.isAlive, "the operator must not keep the emitted values while the token lives")
        token.invalidate()
    }

    @Test func valuesSentConcurrentlyAreAllCollected() {
        let senders = 4
        let perSender = 2_000
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: subject.collect())
        let finished = runOnThreads(senders) { sender in
            for index in 0..<perSender { subject.send(sender * perSender + index) }
        }
        #expect(finished)
        subject.send(completion: .finished)
        // The last values may be delivered by a drain handed on to a global queue after the senders returned.
        #expect(eventually { recorder.completionCount == 1 })
        #expect(recorder.values.count == 1)
        #expect(recorder.values.first?.sorted() == Array(0..<(senders * perSender)))
        #expect(recorder.completionCount == 1)
        token.invalidate()
    }
}
