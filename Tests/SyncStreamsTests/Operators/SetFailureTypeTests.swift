import Testing

@testable import SyncStreams

@Suite struct SetFailureTypeTests {
    @Test func valuesAndFinishedPassThroughUnderTheNewFailureType() {
        let subject = PassthroughSubject<Int, Never>()
        let stream: Streams.SetFailureType<PassthroughSubject<Int, Never>, StreamTestError> =
            subject.setFailureType(to: StreamTestError.self)
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: stream)
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        subject.send(3)
        #expect(recorder.events == [.value(1), .value(2), .finished])
        token.invalidate()
    }

    @Test func aStreamThatCannotFailMergesWithOneThatCan() {
        // The point of the operator: the plain `merge(with:)` requires equal failure types.
        let output = Marble.run("a-b|") { subject, _ in
            Just("x").setFailureType(to: MarbleError.self).merge(with: subject)
        }
        #expect(output == [TimedEvent(time: .zero, event: .value("x"))] + Marble.parse("a-b|"))
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherEvents() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, StreamTestError>()
        recorder.subscribe(to: subject.setFailureType(to: StreamTestError.self), invalidatingAfter: { $0 == 1 })
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1)])
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheCallbacks() {
        let subject = PassthroughSubject<Int, Never>()
        let tracker = SubscriptionTracker()
        expectInvalidationReleasesCaptures { canary in
            subject.tracked(by: tracker).setFailureType(to: StreamTestError.self).subscribe(
                onValue: { _ in canary.touch() },
                onCompletion: { _ in canary.touch() }
            )
        }
        #expect(tracker.total.value == 1)
        #expect(tracker.active.value == 0)
    }
}
