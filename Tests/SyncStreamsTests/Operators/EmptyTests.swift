import Testing

@testable import SyncStreams

// The time limit bounds the async `first()` tests: a stream that never completes would wait forever.
@Suite(.timeLimit(.minutes(5))) struct EmptyTests {
    @Test func finishesWithoutAValueBeforeSubscribeReturns() {
        let recorder = Recorder<Int, StreamTestError>()
        let token = recorder.subscribe(to: Empty<Int, StreamTestError>())
        #expect(recorder.events == [.finished])
        #expect(token.isInvalidated)
    }

    @Test func keepsNothingOfTheSubscriberOnceSubscribeReturned() {
        for completeImmediately in [true, false] {
            let probe = LifetimeProbe()
            let token = probe.capture { canary in
                Empty<Int, Never>(completeImmediately: completeImmediately).subscribe(
                    onValue: { _ in canary.touch() },
                    onCompletion: { _ in canary.touch() }
                )
            }
            #expect(!probe.isAlive, "completeImmediately: \(completeImmediately)")
            token.invalidate()
        }
    }

    @Test func withoutImmediateCompletionNothingIsEverDeliveredAndTheTokenIsLiveUntilInvalidated() {
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(
            to: Empty(completeImmediately: false, outputType: Int.self, failureType: Never.self))
        #expect(recorder.events.isEmpty)
        #expect(!token.isInvalidated)
        token.invalidate()
        #expect(token.isInvalidated)
        #expect(recorder.events.isEmpty)
    }

    @Test func mergedWithAStreamItAddsNothingAndDoesNotHoldBackTheCompletion() {
        let output = Marble.run("a-b|") { subject, _ in subject.merge(with: Empty()) }
        #expect(output == Marble.parse("a-b|"))
    }

    @Test func mergedWithoutImmediateCompletionItHoldsBackTheCompletionForever() {
        let output = Marble.run("a-b|") { subject, _ in subject.merge(with: Empty(completeImmediately: false)) }
        #expect(output == Marble.parse("a-b-"))
    }

    @Test func firstReturnsNil() async throws {
        #expect(try await Empty<Int, StreamTestError>().first() == nil)
    }

    @Test func isEquatable() {
        #expect(Empty<Int, Never>() == Empty<Int, Never>(completeImmediately: true))
        #expect(Empty<Int, Never>() != Empty<Int, Never>(completeImmediately: false))
    }
}
