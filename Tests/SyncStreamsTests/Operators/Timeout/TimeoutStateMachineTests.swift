import Testing

@testable import SyncStreams

/// The timeout logic without threads or time.
@Suite struct TimeoutStateMachineTests {
    func makeMachine() -> TimeoutStateMachine<Int, MarbleError> {
        TimeoutStateMachine(start: .zero, interval: .seconds(3)) { .failure(MarbleError()) }
    }

    func at(_ seconds: Int) -> StreamInstant { StreamInstant(sinceOrigin: .seconds(seconds)) }

    @Test func theClockStartsAtSubscriptionAndAValuePushesTheDeadlineBack() {
        var machine = makeMachine()
        let start = machine.started()
        #expect(start?.startTimer?.delay == .seconds(3))
        let epoch = start?.startTimer?.request.epoch ?? 0
        let step1 = machine.valueReceived(1, at: at(2))
        #expect(step1.value == 1)
        let early = machine.timerFired(epoch: epoch, at: at(3))
        #expect(early.completion == nil)
        #expect(early.effect?.startTimer?.delay == .seconds(2), "waits the rest: deadline 5 s")
        let late = machine.timerFired(epoch: early.effect?.startTimer?.request.epoch ?? 0, at: at(5))
        #expect(late.completion == nil, "the completion is made outside the lock")
        #expect(late.effect?.endsUpstream == true)
        #expect(late.effect?.computesCompletion == true)
        let ending = machine.completionComputed(machine.completionOutsideLock?() ?? .finished)
        #expect(ending.completion == .failure(MarbleError()))
        let step2 = machine.valueReceived(2, at: at(6))
        #expect(step2.value == nil, "a value after the timeout")
    }

    @Test func anUpstreamCompletionPassesAndStopsTheTimer() {
        var machine = makeMachine()
        let epoch = machine.started()?.startTimer?.request.epoch ?? 0
        let step3 = machine.completed(.finished)
        #expect(step3.completion == .finished)
        let step4 = machine.timerFired(epoch: epoch, at: at(10))
        #expect(step4.completion == nil, "the timer fired after the end")
    }

    @Test func cancellationStopsTheTimerAndEndsTheUpstream() {
        var machine = makeMachine()
        let epoch = machine.started()?.startTimer?.request.epoch ?? 0
        let step5 = machine.cancelled()
        #expect(step5.endsUpstream)
        let step6 = machine.timerFired(epoch: epoch, at: at(10))
        #expect(step6.completion == nil)
    }

    // Events no phase can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func anUpstreamValueAfterItsCompletionTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = TimeoutStateMachine<Int, MarbleError>(start: .zero, interval: .seconds(3)) {
                .failure(MarbleError())
            }
            _ = machine.started()
            _ = machine.completed(.finished)
            _ = machine.valueReceived(1, at: .zero)
        }
    }

    @Test func aTimeoutCompletionWithoutATimeoutTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = TimeoutStateMachine<Int, MarbleError>(start: .zero, interval: .seconds(3)) {
                .failure(MarbleError())
            }
            _ = machine.started()
            _ = machine.completionComputed(.finished)
        }
    }

    @Test func aCompletionComputedAfterTheSubscriberLeftIsDropped() {
        var machine = makeMachine()
        let epoch = machine.started()?.startTimer?.request.epoch ?? 0
        let timingOut = machine.timerFired(epoch: epoch, at: at(3))
        #expect(timingOut.effect?.computesCompletion == true)
        _ = machine.cancelled()
        let step = machine.completionComputed(.failure(MarbleError()))
        #expect(step.completion == nil, "the subscriber left while the completion was being made")
    }
}
