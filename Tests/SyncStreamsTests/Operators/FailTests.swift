import Testing

@testable import SyncStreams

// The time limit bounds the async `first()` tests: a stream that never completes would wait forever.
@Suite(.timeLimit(.minutes(5))) struct FailTests {
    @Test func failsWithoutAValueBeforeSubscribeReturns() {
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: Fail<Int, StreamTestError>(error: .boom))
        #expect(recorder.events == [.failure(.boom)])
        #expect(token.isInvalidated)
    }

    @Test func everySubscriptionReceivesTheFailure() {
        let fail = Fail(outputType: String.self, failure: StreamTestError.other)
        let first = Recorder<String, StreamTestError>()
        let second = Recorder<String, StreamTestError>()
        _ = first.subscribe(to: fail)
        _ = second.subscribe(to: fail)
        #expect(first.events == [.failure(.other)])
        #expect(second.events == [.failure(.other)])
        #expect(fail.error == .other)
    }

    @Test func keepsNothingOfTheSubscriberOnceSubscribeReturned() {
        let probe = LifetimeProbe()
        let token = probe.capture { canary in
            Fail<Int, StreamTestError>(error: .boom).subscribe(
                onValue: { _ in canary.touch() },
                onCompletion: { _ in canary.touch() }
            )
        }
        #expect(!probe.isAlive)
        token.invalidate()
    }

    @Test func mergedWithAStreamItFailsTheMergeAtOnceAndEndsTheOtherSubscription() {
        let tracker = SubscriptionTracker()
        let output = Marble.run("a-b|") { subject, _ in
            subject.tracked(by: tracker).merge(with: Fail(error: MarbleError(name: "f")))
        }
        #expect(output == [TimedEvent(time: .zero, event: .failure(MarbleError(name: "f")))])
        #expect(tracker.total.value == 1)
        #expect(tracker.active.value == 0)
    }

    @Test func aCatchHandlerCanFailAgainWithIt() {
        let output = Marble.run("ab#") { subject, _ in
            subject.catch { _ in Fail(error: MarbleError(name: "again")) }
        }
        var expected = Marble.parse("ab#")
        expected[2].event = .failure(MarbleError(name: "again"))
        #expect(output == expected)
    }

    @Test func firstThrowsTheError() async {
        await #expect(throws: StreamTestError.boom) { try await Fail<Int, StreamTestError>(error: .boom).first() }
    }

    @Test func isEquatableWhenItsFailureIs() {
        #expect(Fail<Int, StreamTestError>(error: .boom) == Fail(error: .boom))
        #expect(Fail<Int, StreamTestError>(error: .boom) != Fail(error: .other))
    }
}
