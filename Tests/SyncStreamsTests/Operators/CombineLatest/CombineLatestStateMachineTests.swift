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
}
