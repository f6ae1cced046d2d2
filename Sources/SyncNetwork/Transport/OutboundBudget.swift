import SyncStreams

/// Counts the bytes queued for a socket across threads: senders add what they queue, the loop releases
/// what it wrote; `waitUntilBelowLowWater()` suspends a sender until the queue has drained to the
/// low-water mark (or the connection ended).
final class OutboundBudget: Sendable {
    private struct State {
        var queued = 0
        var peak = 0
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let lowWater: Int
    private let state = Locked(State())

    init(lowWater: Int) { self.lowWater = lowWater }

    /// Adds `count` queued bytes; returns the total queued, or `nil` once finished.
    func add(_ count: Int) -> Int? {
        state.withLock { state in
            guard !state.finished else { return nil }
            state.queued += count
            state.peak = max(state.peak, state.queued)
            return state.queued
        }
    }

    /// Releases `count` written (or dropped) bytes, waking waiters once at or below the low-water mark.
    func release(_ count: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.queued = max(0, state.queued - count)
            guard state.queued <= lowWater else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends the budget: waiters return, and later ones at once.
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var queued: Int { state.withLock { $0.queued } }

    /// The most bytes ever queued at once.
    var peak: Int { state.withLock { $0.peak } }

    func waitUntilBelowLowWater() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.finished || state.queued <= lowWater { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
