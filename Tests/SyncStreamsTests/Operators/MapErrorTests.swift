import Testing

@testable import SyncStreams

@Suite struct MapErrorTests {
    @Test func valuesPassThroughAndTheFailureIsTransformed() {
        let output = Marble.run("ab#") { subject, _ in
            subject.mapError { error in MarbleError(name: "wrapped \(error.name)") }
        }
        var expected = Marble.parse("ab#")
        expected[2].event = .failure(MarbleError(name: "wrapped #"))
        #expect(output == expected)
    }

    @Test func finishedPassesThroughWithoutCallingTheTransform() {
        let calls = AtomicCounter()
        let output = Marble.run("a-b|") { subject, _ in
            subject.mapError { error -> MarbleError in
                calls.increment()
                return error
            }
        }
        #expect(output == Marble.parse("a-b|"))
        #expect(calls.value == 0)
    }

    @Test func changesTheFailureType() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let stream: Streams.MapError<PassthroughSubject<Int, StreamTestError>, MarbleError> = subject.mapError {
            MarbleError(name: "\($0)")
        }
        let recorder = Recorder<Int, MarbleError>()
        let token = recorder.subscribe(to: stream)
        subject.send(1)
        subject.send(completion: .failure(.boom))
        subject.send(2)
        #expect(recorder.events == [.value(1), .failure(MarbleError(name: "boom"))])
        token.invalidate()
    }

    @Test func reentrantInvalidateInsideTheValueCallbackStopsFurtherEvents() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let recorder = Recorder<Int, MarbleError>()
        recorder.subscribe(to: subject.mapError { _ in MarbleError() }, invalidatingAfter: { $0 == 2 })
        for value in 1...4 { subject.send(value) }
        subject.send(completion: .failure(.boom))
        #expect(recorder.events == [.value(1), .value(2)])
    }

    @Test func invalidateEndsTheUpstreamSubscriptionAndReleasesTheTransform() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let tracker = SubscriptionTracker()
        expectInvalidationReleasesCaptures { canary in
            subject.tracked(by: tracker).mapError { error -> MarbleError in
                canary.touch()
                return MarbleError(name: "\(error)")
            }.subscribe(onValue: { _ in }, onCompletion: { _ in })
        }
        #expect(tracker.total.value == 1)
        #expect(tracker.active.value == 0)
    }
}
