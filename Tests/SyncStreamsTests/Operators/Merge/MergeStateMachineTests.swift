import Testing

@testable import SyncStreams

/// The merge logic without threads.
@Suite struct MergeStateMachineTests {
    @Test func valuesPassAndTheOutputFinishesWhenEveryInputFinished() {
        var machine = MergeStateMachine<Int, MarbleError>(inputCount: 3)
        let step1 = machine.valueReceived(1)
        #expect(step1.value == 1)
        let step2 = machine.completed(.finished)
        #expect(step2.completion == nil)
        let step3 = machine.completed(.finished)
        #expect(step3.completion == nil)
        let step4 = machine.valueReceived(2)
        #expect(step4.value == 2)
        let last = machine.completed(.finished)
        #expect(last.completion == .finished)
        if case .cancelInputs? = last.effect {} else { Issue.record("no cancel effect") }
        let step5 = machine.valueReceived(3)
        #expect(step5.value == nil)
    }

    @Test func theFirstFailureEndsTheOutputAtOnce() {
        var machine = MergeStateMachine<Int, MarbleError>(inputCount: 2)
        let step6 = machine.completed(.failure(MarbleError()))
        #expect(step6.completion == .failure(MarbleError()))
        let step7 = machine.completed(.finished)
        #expect(step7.completion == nil)
        #expect(machine.isTerminated)
    }
}
