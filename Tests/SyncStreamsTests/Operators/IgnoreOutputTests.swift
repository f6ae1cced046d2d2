import Testing

@testable import SyncStreams

// The time limit bounds the async `first()` tests: a stream that never completes would wait forever.
@Suite(.timeLimit(.minutes(5))) struct IgnoreOutputTests {
    /// Marble output for a stream of `Never`: its completion, as a `String` stream's.
    private func completionOnly<S: SyncStream>(_ stream: S) -> AnySyncStream<String, S.Failure>
    where S.Output == Never {
        AnySyncStream { _, onCompletion in stream.subscribe(onValue: { _ in }, onCompletion: onCompletion) }
    }

    /// A callback that captures `canary`; generic, so that it can stand for a callback of `Never`.
    private func touching<Value>(_ canary: LifetimeCanary) -> @Sendable (Value) -> Void {
        { _ in canary.touch() }
    }

    @Test func dropsEveryValueAndPassesTheCompletionOn() {
        let output = Marble.run("abc|") { subject, _ in completionOnly(subject.ignoreOutput()) }
        #expect(output == Marble.parse("---|"))
    }

    @Test func passesTheFailureOn() {
        let output = Marble.run("ab-#") { subject, _ in completionOnly(subject.ignoreOutput()) }
        #expect(output == Marble.parse("---#"))
    }

    @Test func keepsNotTheValueClosureButTheCompletionClosureUntilInvalidated() {
        let subject = PassthroughSubject<Int, Never>()
        let valueProbe = LifetimeProbe()
        let completionProbe = LifetimeProbe()
        let token = valueProbe.capture { valueCanary in
            completionProbe.capture { completionCanary in
                subject.ignoreOutput().subscribe(
                    onValue: touching(valueCanary),
                    onCompletion: { _ in completionCanary.touch() }
                )
            }
        }
        #expect(!valueProbe.isAlive, "the value closure can never be called, so it is not kept")
        #expect(completionProbe.isAlive)
        token.invalidate()
        #expect(!completionProbe.isAlive)
    }

    @Test func invalidateEndsTheUpstreamSubscription() {
        let subject = PassthroughSubject<Int, StreamTestError>()
        let tracker = SubscriptionTracker()
        let recorder = Recorder<Never, StreamTestError>()
        let token = recorder.subscribe(to: subject.tracked(by: tracker).ignoreOutput())
        subject.send(1)
        token.invalidate()
        subject.send(completion: .failure(.boom))
        #expect(tracker.active.value == 0)
        #expect(recorder.events.isEmpty)
    }

    @Test func firstReturnsNilAtTheEndOfTheStreamOrThrowsItsFailure() async throws {
        #expect(try await Just(1).setFailureType(to: StreamTestError.self).ignoreOutput().first() == nil)
        await #expect(throws: StreamTestError.boom) {
            try await Fail<Int, StreamTestError>(error: .boom).ignoreOutput().first()
        }
    }
}
