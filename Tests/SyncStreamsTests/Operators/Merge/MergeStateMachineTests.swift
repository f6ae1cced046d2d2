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
        let step3 = machine.completed(0, .finished)
        #expect(step3.completion == nil)
        let step4 = machine.valueReceived(0) { $0 = 2 }
        #expect(step4.value == 2)
        let last = machine.completed(0, .finished)
        #expect(last.completion == .finished)
        if case .cancelInputs? = last.effect {} else { Issue.record("no cancel effect") }
        let step5 = machine.valueReceived(0) { $0 = 3 }
        #expect(step5.value == nil)
    }

    @Test func theFirstFailureEndsTheOutputAtOnce() {
        var machine = MergeStateMachine<Int, MarbleError>(inputCount: 2)
        let step6 = machine.completed(0, .failure(MarbleError()))
        #expect(step6.completion == .failure(MarbleError()))
        let step7 = machine.completed(0, .finished)
        #expect(step7.completion == nil)
        #expect(machine.isTerminated)
    }
}
