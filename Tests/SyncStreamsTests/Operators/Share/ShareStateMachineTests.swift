import TestSupport
import Testing

@testable import SyncStreams

/// The logic of one share connection without threads.
@Suite(.offPool) struct ShareStateMachineTests {
    @Test func keepsTheLastValuesForLateSubscribersAndHandsTheEvictedOneOut() {
        var machine = ShareStateMachine<Int, MarbleError>(replayCount: 2)
        let step1 = machine.join()
        #expect(step1)
        let step2 = machine.valueReceived(1)
        #expect(step2.value == 1)
        let step3 = machine.valueReceived(2)
        #expect(step3.effect == nil)
        let third = machine.valueReceived(3)
        #expect(third.value == 3)
        if case .discard(1)? = third.effect {} else { Issue.record("the evicted value is not handed out") }
        #expect(machine.replayedValues == [2, 3])
    }

    @Test func theLastSubscriberLeavingEndsTheConnection() {
        var machine = ShareStateMachine<Int, MarbleError>(replayCount: 0)
        let step4 = machine.join()
        let step5 = machine.join()
        #expect(step4 && step5)
        let step6 = machine.left()
        #expect(step6 == nil)
        if case .endUpstream? = machine.left() {} else { Issue.record("the upstream was not ended") }
        #expect(machine.phase == .abandoned)
        let late = machine.valueReceived(9)
        #expect(late.value == nil, "an upstream value on its way when the connection was abandoned")
        let step7 = machine.join()
        #expect(!step7, "joined an ended connection")
    }

    @Test func theCompletionEndsTheConnectionAndLateSubscribersStillJoinIt() {
        var machine = ShareStateMachine<Int, MarbleError>(replayCount: 1)
        _ = machine.join()
        _ = machine.valueReceived(1)
        let step8 = machine.completed(.failure(MarbleError()))
        #expect(step8.completion == .failure(MarbleError()))
        #expect(machine.phase == .completed)
        let step10 = machine.left()
        #expect(step10 == nil, "an ended connection is ended again")
        let lateJoin = machine.join()
        #expect(lateJoin, "a late subscriber must join the completed connection, not reconnect")
        #expect(machine.replayedValues == [1])
        #expect(machine.left() == nil)
    }

    // Events no phase can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func anUpstreamValueAfterItsCompletionTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ShareStateMachine<Int, MarbleError>(replayCount: 1)
            _ = machine.join()
            _ = machine.completed(.finished)
            _ = machine.valueReceived(2)
        }
    }

    @Test func leavingAConnectionNeverJoinedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ShareStateMachine<Int, MarbleError>(replayCount: 1)
            _ = machine.left()
        }
    }
}
