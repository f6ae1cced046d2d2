import Testing

@testable import SyncStreams

/// The combineLatest logic without threads: what each input event emits or ends.
@Suite struct CombineLatestStateMachineTests {
    typealias Machine = CombineLatestStateMachine<(Int?, String?), String, MarbleError>

    func makeMachine() -> Machine {
        Machine(empty: (nil, nil), inputCount: 2) { "\($0.0!)\($0.1!)" }
    }

    @Test func emitsOnlyOnceEveryInputHasAValueThenOnEveryValue() {
        var machine = makeMachine()
        let step1 = machine.valueReceived(0) { $0.0 = 1 }
        #expect(step1.value == nil)
        let step2 = machine.valueReceived(0) { $0.0 = 2 }
        #expect(step2.value == nil)
        let step3 = machine.valueReceived(1) { $0.1 = "a" }
        #expect(step3.value == "2a")
        let step4 = machine.valueReceived(0) { $0.0 = 3 }
        #expect(step4.value == "3a")
    }

    @Test func finishesAtOnceWhenAnInputFinishesWithoutAValueAndAsksToCancelTheOthers() {
        var machine = makeMachine()
        _ = machine.valueReceived(0) { $0.0 = 1 }
        let action = machine.completed(1, .finished)
        #expect(action.completion == .finished)
        if case .cancelInputs? = action.effect {} else { Issue.record("inputs not cancelled") }
        let step5 = machine.valueReceived(1) { $0.1 = "a" }
        #expect(step5.value == nil, "a value after the end")
    }

    @Test func finishesOnlyWhenTheLastInputThatHasAValueFinishes() {
        var machine = makeMachine()
        _ = machine.valueReceived(0) { $0.0 = 1 }
        _ = machine.valueReceived(1) { $0.1 = "a" }
        let step6 = machine.completed(0, .finished)
        #expect(step6.completion == nil)
        let step7 = machine.valueReceived(1) { $0.1 = "b" }
        #expect(step7.value == "1b", "the other input still drives")
        let step8 = machine.completed(1, .finished)
        #expect(step8.completion == .finished)
    }

    @Test func aFailureEndsAtOnceEvenWithValues() {
        var machine = makeMachine()
        _ = machine.valueReceived(0) { $0.0 = 1 }
        _ = machine.valueReceived(1) { $0.1 = "a" }
        let step9 = machine.completed(1, .failure(MarbleError()))
        #expect(step9.completion == .failure(MarbleError()))
        let step10 = machine.completed(0, .finished)
        #expect(step10.completion == nil, "completed twice")
    }

    @Test func cancellationEndsTheMachineAndAsksToCancelTheInputs() {
        var machine = makeMachine()
        if case .cancelInputs? = machine.cancelled() {} else { Issue.record("inputs not cancelled") }
        #expect(machine.isTerminated)
        let step11 = machine.valueReceived(0) { $0.0 = 1 }
        #expect(step11.value == nil)
    }

    @Test func aFinishedInputWithAValueLeavesTheOthersToFormTheFirstCombination() {
        var machine = CombineLatestStateMachine<(Int?, String?, Int?), String, MarbleError>(
            empty: (nil, nil, nil), inputCount: 3
        ) { "\($0.0!)\($0.1!)\($0.2!)" }
        _ = machine.valueReceived(0) { $0.0 = 1 }
        #expect(machine.completed(0, .finished).completion == nil, "input 0 has a value: the others go on")
        #expect(machine.valueReceived(1) { $0.1 = "a" }.value == nil, "input 2 has no value yet")
        #expect(machine.valueReceived(2) { $0.2 = 7 }.value == "1a7")
        #expect(machine.completed(1, .finished).completion == nil)
        let last = machine.completed(2, .finished)
        #expect(last.completion == .finished, "the last live input finished")
    }

    @Test func anInputThatCompletesTwiceTraps() async {
        // Counting it twice would end the output while another input is still live: the broken contract
        // traps with a message instead.
        await #expect(processExitsWith: .failure) {
            var machine = CombineLatestStateMachine<(Int?, String?, Int?), String, MarbleError>(
                empty: (nil, nil, nil), inputCount: 3
            ) { "\($0.0!)\($0.1!)\($0.2!)" }
            _ = machine.valueReceived(0) { $0.0 = 1 }
            _ = machine.valueReceived(1) { $0.1 = "a" }
            _ = machine.valueReceived(2) { $0.2 = 7 }
            _ = machine.completed(0, .finished)
            _ = machine.completed(0, .finished)
        }
    }
}
