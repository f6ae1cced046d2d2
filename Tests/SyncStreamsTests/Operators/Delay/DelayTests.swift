import Testing

@testable import SyncStreams

@Suite struct DelayTests {
    let interval = Marble.tick * 2

    func delayed(_ input: String) -> [TimedEvent] {
        Marble.run(input) { subject, executor in subject.delay(for: interval, on: executor) }
    }

    @Test func everyEventArrivesTheIntervalLaterInOrder() {
        #expect(delayed("a-b--c|") == Marble.parse("--a-b--c|"))
    }

    @Test func eventsAtTheSameTimeKeepTheirOrder() {
        #expect(delayed("(ab)-c|") == Marble.parse("--(ab)-c|"))
    }

    @Test func theFailureFollowsTheLastDelayedValue() {
        #expect(delayed("ab#") == Marble.parse("--ab#"))
    }

    @Test func invalidationDropsWhatIsWaitingAndStopsTheTimer() {
        let output = Marble.run("ab---c|", invalidateAt: Marble.tick * 2) { subject, executor in
            subject.delay(for: interval, on: executor)
        }
        #expect(output == [], "an event was delivered after invalidation: \(output)")
    }

    @Test func invalidationReleasesCapturesAndNoTimerFiresAfterwards() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        expectInvalidationReleasesCaptures { canary in
            let token = subject.delay(for: .seconds(1), on: executor).subscribe { _ in canary.touch() }
            subject.send(1)
            return token
        }
        #expect(executor.pendingCount == 0, "the timer was not cancelled")
    }

    @Test func stateMachineRunsOneTimerForTheHeadOfTheQueue() {
        var machine = DelayStateMachine<Int, MarbleError>(interval: .seconds(2))
        func at(_ seconds: Int) -> StreamInstant { StreamInstant(sinceOrigin: .seconds(seconds)) }
        let first = machine.valueReceived(1, at: at(0))
        #expect(first.effect?.startTimer?.delay == .seconds(2))
        let second = machine.valueReceived(2, at: at(1))
        #expect(second.effect == nil, "a second timer for a value behind the head")
        let fired = machine.timerFired(epoch: first.effect?.startTimer?.request.epoch ?? 0, at: at(2))
        #expect(fired.value == 1 && fired.effect?.startTimer?.delay == .seconds(1))
        let completion = machine.completed(.finished, at: at(2))
        #expect(completion.completion == nil, "the completion jumped the queue")
    }

    // Events no phase can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func stateMachineTrapsOnAValueAfterTheCompletion() async {
        await #expect(processExitsWith: .failure) {
            var machine = DelayStateMachine<Int, MarbleError>(interval: .seconds(2))
            _ = machine.completed(.finished, at: .zero)
            _ = machine.valueReceived(1, at: .zero)
        }
    }

    @Test func stateMachineDropsEventsOnTheirWayWhenTheSubscriberLeft() {
        var machine = DelayStateMachine<Int, MarbleError>(interval: .seconds(2))
        let first = machine.valueReceived(1, at: .zero)
        let effect = machine.cancelled()
        #expect(effect.discarded?.count == 1, "the waiting value is released outside the lock")
        #expect(machine.valueReceived(2, at: .zero).effect == nil)
        #expect(machine.completed(.finished, at: .zero).effect == nil)
        let fired = machine.timerFired(epoch: first.effect?.startTimer?.request.epoch ?? 0, at: .zero)
        #expect(fired.value == nil, "the stopped timer does nothing")
    }
}
