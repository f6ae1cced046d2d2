import SyncStreams

/// Publishes a state's successive values through a `CurrentValueSubject` in exactly the order they were
/// decided, without calling out under the lock that decided them.
///
/// The owner decides a new value under its own lock and calls `enqueue` there (cheap, never calls out);
/// after unlocking it calls `drain()`, which delivers the queued values in order — unless another thread or
/// an outer frame of this one is already draining, in which case that drain delivers them. So two threads
/// changing the state one after the other can never publish the older value last, and a subscriber that
/// changes the state from inside its callback does not deadlock.
final class OrderedPublisher<Value: Sendable>: Sendable {
    /// The subject subscribers see; only `drain()` sends into it.
    let subject: CurrentValueSubject<Value, Never>
    private let queue = Locked<(pending: [Value], draining: Bool)>(([], false))

    init(_ initial: Value) { subject = CurrentValueSubject(initial) }

    /// Queues `value` behind the values queued before it.
    func enqueue(_ value: Value) { queue.withLock { $0.pending.append(value) } }

    /// Delivers every queued value in order, unless a drain is already under way.
    func drain() {
        let mayDrain = queue.withLock { state -> Bool in
            if state.draining || state.pending.isEmpty { return false }
            state.draining = true
            return true
        }
        guard mayDrain else { return }
        while let next = queue.withLock({ state -> Value? in
            if state.pending.isEmpty {
                state.draining = false
                return nil
            }
            return state.pending.removeFirst()
        }) {
            subject.send(next)
        }
    }
}
