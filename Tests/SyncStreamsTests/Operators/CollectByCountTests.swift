import TestSupport
import Testing

@testable import SyncStreams

@Suite(.offPool) struct CollectByCountTests {
    /// An event at `tick` marble ticks; a collected array is written as its values joined (`"ab"`).
    private func at(_ tick: Int, _ event: RecordedEvent<String, MarbleError>) -> TimedEvent {
        TimedEvent(time: Marble.tick * tick, event: event)
    }

    @Test func emitsEachFullArrayAtOnceAndThePartialLastOneBeforeFinished() {
        let output = Marble.run("abcde|") { subject, _ in subject.collect(2).map { $0.joined() } }
        #expect(output == [at(1, .value("ab")), at(3, .value("cd")), at(5, .value("e")), at(5, .finished)])
    }

    @Test func noEmptyArrayWhenTheValuesFillTheLastArrayExactly() {
        let output = Marble.run("abcd-|") { subject, _ in subject.collect(2).map { $0.joined() } }
        #expect(output == [at(1, .value("ab")), at(3, .value("cd")), at(5, .finished)])
    }

    @Test func aFailureIsForwardedAndThePartialArrayDropped() {
        let output = Marble.run("abc-#") { subject, _ in subject.collect(2).map { $0.joined() } }
        #expect(output == [at(1, .value("ab")), at(4, .failure(MarbleError()))])
    }

    @Test func aCountBelowOneCountsAsOne() {
        for count in [0, -3] {
            let output = Marble.run("ab|") { subject, _ in subject.collect(count).map { $0.joined() } }
            #expect(output == Marble.parse("ab|"), "collect(\(count))")
            #expect(Streams.CollectByCount(upstream: Empty<Int, Never>(), count: count).count == 1)
        }
    }

    @Test func aHugeCountDoesNotReserveMemoryAhead() {
        // Reserving 2⁴⁰ strings up front would fail to allocate and crash.
        for count in [1 << 40, Int.max] {
            let output = Marble.run("ab|") { subject, _ in subject.collect(count).map { $0.joined() } }
            #expect(output == [at(2, .value("ab")), at(2, .finished)], "collect(\(count))")
        }
    }

    @Test func eachSubscriptionCollectsSeparately() {
        let subject = PassthroughSubject<Int, Never>()
        let collected = subject.collect(2)
        let first = Recorder<[Int], Never>()
        let second = Recorder<[Int], Never>()
        let firstToken = first.subscribe(to: collected)
        subject.send(1)
        let secondToken = second.subscribe(to: collected)
        subject.send(2)
        subject.send(3)
        #expect(first.values == [[1, 2]])
        #expect(second.values == [[2, 3]])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func reentrantInvalidateInsideAFullArrayCallbackStopsFurtherArrays() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        recorder.subscribe(to: subject.collect(2), invalidatingAfter: { _ in true })
        for value in 1...5 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value([1, 2])])
    }

    @Test func reentrantInvalidateInsideThePartialArrayCallbackSuppressesFinished() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        recorder.subscribe(to: subject.collect(2), invalidatingAfter: { $0.count == 1 })
        for value in 1...3 { subject.send(value) }
        subject.send(completion: .finished)
        #expect(recorder.events == [.value([1, 2]), .value([3])], "no completion after the subscriber invalidated")
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesThePartialArray() {
        let subject = PassthroughSubject<LifetimeCanary, Never>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).collect(3).map(\.count))
        let probe = LifetimeProbe()
        _ = probe.capture { canary in
            subject.send(canary)
            return .empty
        }
        #expect(probe.isAlive, "the partial array is kept until it is full or the upstream finishes")
        token.invalidate()
        #expect(!probe.isAlive)
        #expect(tracker.active.value == 0)
        subject.send(completion: .finished)
        #expect(recorder.events.isEmpty)
    }

    @Test func afterEmittingAnArrayNothingOfItIsKept() {
        for finishes in [false, true] {
            let recorder = Recorder<Int, Never>()
            let probe = LifetimeProbe()
            let token = probe.capture { canary in
                // An upstream that keeps its subscriber's callbacks until invalidated, as a stream may:
                // only the operator itself can let go of the values it collected. Two values fill an
                // array of 2; with `finishes`, one more makes a partial array emitted at the finish.
                let upstream = AnySyncStream<LifetimeCanary, Never> { onValue, onCompletion in
                    onValue(LifetimeCanary())
                    onValue(finishes ? LifetimeCanary() : canary)
                    if finishes {
                        onValue(canary)
                        onCompletion(.finished)
                    }
                    return SubscriptionToken { _ = (onValue, onCompletion) }
                }
                return recorder.subscribe(to: upstream.collect(2).map(\.count))
            }
            #expect(recorder.values == (finishes ? [2, 1] : [2]))
            #expect(!probe.isAlive, "emitted values must not be kept while the token lives (finishes: \(finishes))")
            token.invalidate()
        }
    }

    @Test func valuesSentConcurrentlyAreAllCollectedInFullArrays() {
        let senders = 4
        let perSender = 2_000
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<[Int], Never>()
        let token = recorder.subscribe(to: subject.collect(7))
        let finished = runOnThreads(senders) { sender in
            for index in 0..<perSender { subject.send(sender * perSender + index) }
        }
        #expect(finished)
        subject.send(completion: .finished)
        // The last values may be delivered by a drain handed on to a global queue after the senders returned.
        #expect(eventually { recorder.completionCount == 1 })
        let arrays = recorder.values
        let total = senders * perSender
        #expect(arrays.dropLast().allSatisfy { $0.count == 7 })
        #expect(arrays.last?.count == total % 7)
        #expect(arrays.joined().sorted() == Array(0..<total))
        #expect(recorder.completionCount == 1)
        token.invalidate()
    }
}
