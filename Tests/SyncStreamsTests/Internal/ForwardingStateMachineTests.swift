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
    }

    // Events no phase can receive break the stream contract: they trap with a message instead of being
    // dropped silently.

    @Test func aValueAfterTheCompletionTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ForwardingStateMachine<Int, MarbleError>()
            _ = machine.completed(.finished)
            _ = machine.valueReceived(2)
        }
    }

    @Test func aSecondCompletionTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ForwardingStateMachine<Int, MarbleError>()
            _ = machine.completed(.finished)
            _ = machine.completed(.failure(MarbleError()))
        }
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
