import Testing

@testable import SyncStreams

/// The catch logic without threads.
@Suite struct CatchStateMachineTests {
    typealias Machine = CatchStateMachine<Int, MarbleError, StreamTestError>

    @Test func upstreamEventsPassUntilItFailsThenTheReplacementsDo() {
        var machine = Machine()
        let step1 = machine.upstreamValue(1)
        #expect(step1.value == 1)
        let step2 = machine.replacementValue(9)
        #expect(step2.value == nil, "a replacement value before the failure")
        guard case .subscribeReplacement(MarbleError())? = machine.upstreamCompleted(.failure(MarbleError())).effect
        else {
            Issue.record("the replacement was not asked for")
            return
        }
        let step3 = machine.upstreamValue(2)
        #expect(step3.value == nil, "an upstream value after its failure")
        let step4 = machine.replacementValue(3)
        #expect(step4.value == 3)
        let step5 = machine.replacementCompleted(.failure(.boom))
        #expect(step5.completion == .failure(.boom))
        let step6 = machine.replacementValue(4)
        #expect(step6.value == nil)
    }

    @Test func anUpstreamFinishPassesWithoutAReplacement() {
        var machine = Machine()
        let end = machine.upstreamCompleted(.finished)
        #expect(end.completion == .finished && end.effect == nil)
    }

    @Test func cancellationEndsBothSubscriptions() {
        var machine = Machine()
        if case .endAll = machine.cancelled() {} else { Issue.record("not ended") }
        let step7 = machine.upstreamValue(1)
        #expect(step7.value == nil)
    }
}
