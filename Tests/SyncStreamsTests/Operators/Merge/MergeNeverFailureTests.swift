import Testing

@testable import SyncStreams

/// `merge(with:)` of streams that cannot fail with streams that can, without `setFailureType(to:)` at the
/// call site.
@Suite struct MergeNeverFailureTests {
    @Test func aStreamThatCannotFailMergesWithOnesThatCan() {
        let output = Marble.run("a-b#") { subject, _ in
            let merged:
                Streams.Merge<
                    Streams.SetFailureType<Just<String>, MarbleError>, PassthroughSubject<String, MarbleError>
                > =
                    Just("x").merge(with: subject)
            return merged
        }
        #expect(output == [TimedEvent(time: .zero, event: .value("x"))] + Marble.parse("a-b#"))
    }

    @Test func aStreamThatCanFailMergesWithOnesThatCannot() {
        let output = Marble.run("a-b|") { subject, _ in
            let merged:
                Streams.Merge<
                    PassthroughSubject<String, MarbleError>, Streams.SetFailureType<Just<String>, MarbleError>
                > =
                    subject.merge(with: Just("x"), Just("y"))
            return merged
        }
        let atOnce = [TimedEvent(time: .zero, event: .value("x")), TimedEvent(time: .zero, event: .value("y"))]
        #expect(output == atOnce + Marble.parse("a-b|"))
    }

    @Test func theMergeFinishesWhenEveryInputFinished() {
        let never = PassthroughSubject<Int, Never>()
        let failing = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: failing.merge(with: never))
        failing.send(1)
        failing.send(completion: .finished)
        never.send(2)
        #expect(recorder.events == [.value(1), .value(2)])
        never.send(completion: .finished)
        #expect(recorder.events == [.value(1), .value(2), .finished])
        token.invalidate()
    }

    @Test func inputsThatAllCannotFailStillGetThePlainOverload() {
        // Inferred, not annotated (an annotation would pick the plain overload by itself): without
        // `@_disfavoredOverload`, the mixing overload in the `Failure == Never` extension ranks as more
        // specific and silently wraps this stream in `SetFailureType<_, Never>`.
        typealias P = PassthroughSubject<Int, Never>
        let a = P()
        let merged = a.merge(with: a, a)
        #expect(type(of: merged) == Streams.Merge<P, P>.self)
    }

    @Test func invalidateEndsEveryInputSubscriptionAndReleasesTheCallbacks() {
        let never = PassthroughSubject<Int, Never>()
        let failing = PassthroughSubject<Int, StreamTestError>()
        let tracker = SubscriptionTracker()
        expectInvalidationReleasesCaptures { canary in
            never.tracked(by: tracker).merge(with: failing.tracked(by: tracker)).subscribe(
                onValue: { _ in canary.touch() },
                onCompletion: { _ in canary.touch() }
            )
        }
        #expect(tracker.total.value == 2)
        #expect(tracker.active.value == 0)
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherEvents() {
        let never = PassthroughSubject<Int, Never>()
        let failing = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, StreamTestError>()
        recorder.subscribe(to: never.merge(with: failing), invalidatingAfter: { $0 == 2 })
        never.send(1)
        failing.send(2)
        never.send(3)
        failing.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(1), .value(2)])
    }
}
