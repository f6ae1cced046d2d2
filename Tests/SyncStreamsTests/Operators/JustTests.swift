import Testing

@testable import SyncStreams

// The time limit bounds the async `first()` tests: a stream that never completes would wait forever.
@Suite(.timeLimit(.minutes(5))) struct JustTests {
    @Test func emitsTheValueThenFinishesBeforeSubscribeReturns() {
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: Just(5))
        // Nothing else runs: what is recorded now was delivered during `subscribe`.
        #expect(recorder.events == [.value(5), .finished])
        #expect(token.isInvalidated, "nothing is left to cancel")
    }

    @Test func everySubscriptionReceivesTheValue() {
        let just = Just("x")
        let first = Recorder<String, Never>()
        let second = Recorder<String, Never>()
        _ = first.subscribe(to: just)
        _ = second.subscribe(to: just)
        #expect(first.events == [.value("x"), .finished])
        #expect(second.events == [.value("x"), .finished])
        #expect(just.output == "x")
    }

    @Test func keepsNothingOfTheSubscriberOnceSubscribeReturned() {
        let probe = LifetimeProbe()
        let token = probe.capture { canary in
            Just(1).subscribe(onValue: { _ in canary.touch() }, onCompletion: { _ in canary.touch() })
        }
        #expect(token.isInvalidated)
        #expect(!probe.isAlive, "the token of a finished Just must not hold the subscriber's closures")
    }

    @Test func aCatchHandlerCanReplaceTheFailureWithIt() {
        let output = Marble.run("ab#") { subject, _ in
            subject.catch { _ in Just("x") }
        }
        #expect(output == Marble.parse("ab(x|)"))
    }

    @Test func anOperatorThatFinishesOnTheValueDeliversOneCompletion() {
        // `prefix(1)` finishes after the value; the `.finished` that Just sends next must not reach the
        // subscriber a second time.
        let recorder = Recorder<Int, Never>()
        _ = recorder.subscribe(to: Just(1).prefix(1))
        #expect(recorder.events == [.value(1), .finished])
        #expect(recorder.completionCount == 1)
    }

    @Test func anInnerJustOfSwitchToLatestIsFollowedByTheNextOuterValue() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject.flatMapLatest { Just($0 * 10) })
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(10), .value(20), .finished])
        token.invalidate()
    }

    @Test func reentrantInvalidateOfAnOperatorAroundItStopsEverything() {
        // The subscriber holds the token of `switchToLatest`, not of Just, and invalidates it while
        // receiving the inner Just's value: Just's `.finished` and later outer values must not arrive.
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        recorder.subscribe(to: subject.flatMapLatest { Just($0) }, invalidatingAfter: { $0 == 1 })
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        #expect(recorder.events == [.value(1)])
    }

    @Test func firstReturnsTheValue() async throws {
        #expect(try await Just(7).first() == 7)
    }

    @Test func isEquatableWhenItsOutputIs() {
        #expect(Just(1) == Just(1))
        #expect(Just(1) != Just(2))
    }
}
