import TestSupport
import Testing

@testable import SyncEngine

@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    let policy = ReconnectBackoff()

    @Test("1 s at first, ×2 for each consecutive failure, capped at 5 minutes")
    func growsAndCaps() {
        var state = BackoffState()
        let delays = (0..<12).map { _ in state.delay(afterFailureOf: 0, policy: policy, random: 0) }
        #expect(
            delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) }
        )
    }

    @Test("jitter subtracts a uniform share of at most a quarter by default; .fleet's is the whole delay")
    func jitter() {
        for random in [0.0, 0.25, 0.5, 0.999, 1.0] {
            var state = BackoffState()
            _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
            let delay = state.delay(afterFailureOf: 0, policy: policy, random: random)
            #expect(delay == .seconds(2) - .seconds(2) * (0.25 * random))
            #expect(delay >= .milliseconds(1500) && delay <= .seconds(2))
            var full = BackoffState()
            _ = full.delay(afterFailureOf: 0, policy: .fleet, random: 0)
            #expect(full.delay(afterFailureOf: 0, policy: .fleet, random: random) == .seconds(2) - .seconds(2) * random)
        }
    }

    @Test("a different kind of failure starts again from the initial delay (the default)")
    func differentErrorResets() {
        var state = BackoffState()
        _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
        _ = state.delay(afterFailureOf: 0, policy: policy, random: 0)
        #expect(state.delay(afterFailureOf: 0, policy: policy, random: 0) == .seconds(4))
        #expect(state.delay(afterFailureOf: 1, policy: policy, random: 0) == .seconds(1))
        #expect(state.delay(afterFailureOf: 1, policy: policy, random: 0) == .seconds(2))
    }

    @Test("with .fleet, 2,000 clients that lost the server together come back spread over the whole delay")
    func fleetSpreads() {
        let seed: UInt64 = 0x5EED_2300
        print("ReconnectBackoffTests.fleetSpreads seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        let clients = 2000
        // Each client's first failure after the restart: the delay until it comes back, in 100 ms buckets.
        var buckets = [Int](repeating: 0, count: 10)
        var latest = Duration.zero
        var earliest = Duration.seconds(1)
        for _ in 0..<clients {
            var state = BackoffState()
            let delay = state.delay(
                afterFailureOf: 0, policy: .fleet, random: Double.random(in: 0..<1, using: &generator))
            latest = max(latest, delay)
            earliest = min(earliest, delay)
            buckets[min(9, Int(delay / .milliseconds(100)))] += 1
        }
        // Uniform over [0, 1 s]: about 200 per 100 ms; the old quarter jitter put all 2,000 in [750, 1000] ms.
        #expect(earliest < .milliseconds(100) && latest > .milliseconds(900), "\(earliest)…\(latest)")
        #expect(buckets.allSatisfy { $0 < clients / 5 }, "\(buckets)")
        #expect(buckets.allSatisfy { $0 > clients / 20 }, "\(buckets)")
    }

    @Test("with .fleet, failures of alternating kinds still back off: the nominal delay grows across kinds")
    func alternatingKindsBackOff() {
        var state = BackoffState()
        let kinds = [
            SyncError.connectionFailed("refused").backoffKind, SyncError.connectTimedOut.backoffKind,
            SyncError.pongTimedOut.backoffKind,
        ]
        let delays = (0..<10).map { state.delay(afterFailureOf: kinds[$0 % kinds.count], policy: .fleet, random: 0) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300].map { Duration.seconds($0) })
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
