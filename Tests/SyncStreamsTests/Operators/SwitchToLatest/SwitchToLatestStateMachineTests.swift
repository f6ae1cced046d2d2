import Testing

@testable import SyncStreams

/// The switchToLatest logic without threads; links are plain numbers here.
@Suite struct SwitchToLatestStateMachineTests {
    typealias Machine = SwitchToLatestStateMachine<String, MarbleError, Int>

    @Test func aNewInnerBecomesCurrentAndEndsThePreviousOne() {
        var machine = Machine()
        guard case .subscribeInner(let first, 10, nil)? = machine.innerArrived(10).effect else {
            Issue.record("first inner not subscribed")
            return
        }
        let step1 = machine.innerValue(first, "a")
        #expect(step1.value == "a")
        guard case .subscribeInner(let second, 20, 10?)? = machine.innerArrived(20).effect else {
            Issue.record("second inner did not replace the first")
            return
        }
        let step2 = machine.innerValue(first, "late")
        #expect(step2.value == nil, "a replaced inner's value passed")
        let step3 = machine.innerValue(second, "b")
        #expect(step3.value == "b")
        let step4 = machine.innerCompleted(first, .finished)
        #expect(step4.completion == nil, "a replaced inner ended the output")
    }

    @Test func finishesWhenTheOuterAndTheCurrentInnerFinished() {
        var machine = Machine()
        let arrived = machine.innerArrived(1).effect
        guard case .subscribeInner(let index, _, _)? = arrived else {
            Issue.record("the first inner was not subscribed: \(String(describing: arrived))")
            return
        }
        let step5 = machine.outerCompleted(.finished)
        #expect(step5.completion == nil, "finished while the inner is active")
        let end = machine.innerCompleted(index, .finished)
        #expect(end.completion == .finished)
        if case .endAll(inner: .some)? = end.effect {} else { Issue.record("outer not ended, inner not handed out") }
    }

    @Test func anInnerFailureEndsEverythingAtOnce() {
        var machine = Machine()
        let arrived = machine.innerArrived(1).effect
        guard case .subscribeInner(let index, _, _)? = arrived else {
            Issue.record("the first inner was not subscribed: \(String(describing: arrived))")
            return
        }
        let step6 = machine.innerCompleted(index, .failure(MarbleError()))
        #expect(step6.completion == .failure(MarbleError()))
        if case .endInner(7)? = machine.innerArrived(7).effect {} else { Issue.record("late inner not ended") }
    }

    @Test func anOuterFailureEndsTheCurrentInner() {
        var machine = Machine()
        _ = machine.innerArrived(5)
        let end = machine.outerCompleted(.failure(MarbleError()))
        #expect(end.completion == .failure(MarbleError()))
        if case .endInner(5)? = end.effect {} else { Issue.record("current inner not ended") }
    }

    @Test func cancellationEndsTheOuterAndTheCurrentInner() {
        var machine = Machine()
        _ = machine.innerArrived(5)
        if case .endAll(inner: 5?) = machine.cancelled() {} else { Issue.record("not everything ended") }
    }

    // Events no state can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func anOuterValueAfterTheOuterFinishedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = SwitchToLatestStateMachine<String, MarbleError, Int>()
            _ = machine.innerArrived(1)
            _ = machine.outerCompleted(.finished)
            _ = machine.innerArrived(2)
        }
    }

    @Test func aValueOfTheCurrentInnerAfterItFinishedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = SwitchToLatestStateMachine<String, MarbleError, Int>()
            _ = machine.innerArrived(1)
            _ = machine.innerCompleted(1, .finished)
            _ = machine.innerValue(1, "late")
        }
    }

    @Test func afterTheCurrentInnerFinishedTheNextOneIsSubscribedAndTheOuterStillLive() {
        var machine = Machine()
        _ = machine.innerArrived(1)
        let step = machine.innerCompleted(1, .finished)
        #expect(step.completion == nil)
        if case .endInner(1)? = step.effect {} else { Issue.record("the finished inner's link not handed out") }
        guard case .subscribeInner(2, 2, nil)? = machine.innerArrived(2).effect else {
            Issue.record("the next inner was not subscribed")
            return
        }
        let end = machine.outerCompleted(.finished)
        #expect(end.completion == nil, "finished while the second inner is live")
        #expect(machine.innerValue(2, "b").value == "b")
    }
}
