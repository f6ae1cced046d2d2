import Testing

@testable import SyncEngine

@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    let policy = ReconnectBackoff()

    @Test("1 s at first, ×2 for each failure of the same kind, capped at 5 minutes")
    func growsAndCaps() {
        var state = BackoffState()
        let delays = (0..<12).map { _ in state.delay(afterFailureOf: 0, policy: policy, random: 0) }
        #expect(
            delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) }
        )
    }

    @Test("jitter subtracts a uniform share of at most a quarter")
    func jitter() {
        for random in [0.0, 0.25, 0.5, 0.999, 1.0] {
            var state = BackoffState()
            _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
            let delay = state.delay(afterFailureOf: 0, policy: policy, random: random)
            #expect(delay == .seconds(2) - .seconds(2) * (0.25 * random))
            #expect(delay >= .milliseconds(1500) && delay <= .seconds(2))
        }
    }

    @Test("a different kind of failure starts again from the initial delay")
    func differentErrorResets() {
        var state = BackoffState()
        _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
        _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
        #expect(state.delay(afterFailureOf: 0, policy: policy, random: 0) == .seconds(4))
        #expect(state.delay(afterFailureOf: 1, policy: policy, random: 0) == .seconds(1))
        #expect(state.delay(afterFailureOf: 1, policy: policy, random: 0) == .seconds(2))
    }

    @Test("reset() starts again from the initial delay")
    func reset() {
        var state = BackoffState()
        _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
        _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
        state.reset()
        #expect(state.delay(afterFailureOf: 0, policy: policy, random: 0) == .seconds(1))
    }

    @Test("errors of one kind with different messages count as the same error")
    func sameKindDifferentMessage() {
        #expect(SyncError.connectionFailed("a").backoffKind == SyncError.connectionFailed("b").backoffKind)
        #expect(SyncError.connectionFailed("a").backoffKind != SyncError.connectTimedOut.backoffKind)
    }

    @Test("a custom policy is honoured, and a cap below the initial delay wins")
    func customPolicy() {
        let custom = ReconnectBackoff(initialDelay: .milliseconds(100), multiplier: 3, maximumDelay: .seconds(1))
        var state = BackoffState()
        let delays = (0..<4).map { _ in state.delay(afterFailureOf: 0, policy: custom, random: 0) }
        #expect(delays == [.milliseconds(100), .milliseconds(300), .milliseconds(900), .seconds(1)])
        var capped = BackoffState()
        let tiny = ReconnectBackoff(initialDelay: .seconds(10), maximumDelay: .seconds(2))
        #expect(capped.delay(afterFailureOf: 0, policy: tiny, random: 0) == .seconds(2))
    }
}
