import Testing

@testable import SyncStreams

/// The merge logic without threads.
@Suite struct MergeStateMachineTests {
    @Test func valuesPassAndTheOutputFinishesWhenEveryInputFinished() {
        var machine = MergeStateMachine<Int, MarbleError>(inputCount: 3)
        let step1 = machine.valueReceived(0) { $0 = 1 }
        #expect(step1.value == 1)
        let step2 = machine.completed(0, .finished)
        #expect(step2.completion == nil)
        let step3 = machine.completed(1, .finished)
        #expect(step3.completion == nil)
        let step4 = machine.valueReceived(2) { $0 = 2 }
        #expect(step4.value == 2, "the last live input still passes values")
        let last = machine.completed(2, .finished)
        #expect(last.completion == .finished)
        if case .cancelInputs? = last.effect {} else { Issue.record("no cancel effect") }
        #expect(machine.isTerminated)
        let step5 = machine.valueReceived(2) { $0 = 3 }
        #expect(step5.value == nil)
    }

    @Test func theFirstFailureEndsTheOutputAtOnce() {
        var machine = MergeStateMachine<Int, MarbleError>(inputCount: 2)
        let step6 = machine.completed(0, .failure(MarbleError()))
        #expect(step6.completion == .failure(MarbleError()))
        if case .cancelInputs? = step6.effect {} else { Issue.record("no cancel effect") }
        let step7 = machine.completed(1, .finished)
        #expect(step7.completion == nil, "a completion on its way after the end is dropped")
        let step8 = machine.valueReceived(1) { $0 = 1 }
        #expect(step8.value == nil, "a value on its way after the end is dropped")
        #expect(machine.isTerminated)
    }

    @Test func cancellationEndsTheMachineAndAsksToCancelTheInputs() {
        var machine = MergeStateMachine<Int, MarbleError>(inputCount: 2)
        if case .cancelInputs? = machine.cancelled() {} else { Issue.record("inputs not cancelled") }
        #expect(machine.isTerminated)
        #expect(machine.valueReceived(0) { $0 = 1 }.value == nil)
        #expect(machine.completed(0, .finished).completion == nil)
    }

    @Test func anInputThatCompletesTwiceTraps() async {
        // Counting it twice would end the merge while another input is still live: the broken contract
        // traps with a message instead.
        await #expect(processExitsWith: .failure) {
            var machine = MergeStateMachine<Int, MarbleError>(inputCount: 3)
            _ = machine.completed(0, .finished)
            _ = machine.completed(0, .finished)
        }
    }
}
