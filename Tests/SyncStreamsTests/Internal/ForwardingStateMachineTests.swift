import Testing

@testable import SyncStreams

/// The state machine of observe(on:) and subscribe(on:).
@Suite struct ForwardingStateMachineTests {
    @Test func valuesPassUntilTheCompletionWhichPassesOnce() {
        var machine = ForwardingStateMachine<Int, MarbleError>()
        let step1 = machine.valueReceived(1)
        #expect(step1.value == 1)
        let step2 = machine.completed(.finished)
        #expect(step2.completion == .finished)
        let step3 = machine.completed(.finished)
        #expect(step3.completion == nil)
        let step4 = machine.valueReceived(2)
        #expect(step4.value == nil)
    }

    @Test func cancellationStopsEverythingAndEndsTheUpstream() {
        var machine = ForwardingStateMachine<Int, MarbleError>()
        if case .endUpstream = machine.cancelled() {} else { Issue.record("upstream not ended") }
        let step5 = machine.valueReceived(1)
        #expect(step5.value == nil)
        let step6 = machine.completed(.finished)
        #expect(step6.completion == nil)
    }
}
