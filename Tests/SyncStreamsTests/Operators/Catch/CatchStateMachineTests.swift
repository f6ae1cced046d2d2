import Testing

@testable import SyncStreams

/// The catch logic without threads.
@Suite struct CatchStateMachineTests {
    typealias Machine = CatchStateMachine<Int, MarbleError, StreamTestError>

    @Test func upstreamEventsPassUntilItFailsThenTheReplacementsDo() {
        var machine = Machine()
        let step1 = machine.upstreamValue(1)
        #expect(step1.value == 1)
        guard case .subscribeReplacement(MarbleError())? = machine.upstreamCompleted(.failure(MarbleError())).effect
        else {
            Issue.record("the replacement was not asked for")
            return
        }
        let step4 = machine.replacementValue(3)
        #expect(step4.value == 3)
        let step5 = machine.replacementCompleted(.failure(.boom))
        #expect(step5.completion == .failure(.boom))
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
        #expect(step7.value == nil, "an upstream value on its way when the subscriber left is dropped")
        let step8 = machine.upstreamCompleted(.failure(MarbleError()))
        #expect(step8.effect == nil, "no replacement after the subscriber left")
        let step9 = machine.replacementCompleted(.finished)
        #expect(step9.completion == nil)
    }

    // Events no phase can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func aReplacementValueBeforeTheUpstreamFailedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = CatchStateMachine<Int, MarbleError, StreamTestError>()
            _ = machine.replacementValue(9)
        }
    }

    @Test func anUpstreamValueAfterItFailedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = CatchStateMachine<Int, MarbleError, StreamTestError>()
            _ = machine.upstreamCompleted(.failure(MarbleError()))
            _ = machine.upstreamValue(2)
        }
    }

    @Test func aReplacementValueAfterItCompletedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = CatchStateMachine<Int, MarbleError, StreamTestError>()
            _ = machine.upstreamCompleted(.failure(MarbleError()))
            _ = machine.replacementCompleted(.finished)
            _ = machine.replacementValue(4)
        }
    }
}
