import SyncStreams

/// Publishes a state's successive values through a `CurrentValueSubject` in exactly the order they were
/// decided, without calling out under the lock that decided them.
///
/// The owner decides a new value under its own lock and calls `enqueue` there (cheap, never calls out);
/// after unlocking it calls `drain()`. The first `drain` to find no sender becomes the sender and sends
/// queued values until the queue is empty; a `drain` arriving meanwhile (from another thread, or
/// re-entering from a subscriber's callback) returns at once and the sender delivers its value. So two
/// threads changing the state one after the other can never publish the older value last, every value is
/// published (none skipped), and a subscriber that changes the state from inside its callback does not
/// deadlock. A `drain` that returned early may return before its value was delivered (another thread is
/// delivering it); on one thread without contention, values are delivered before `drain` returns.
///
/// Cost: one lock round trip to enqueue and two per drain; the queue and the sender's batch swap buffers,
/// so the steady state allocates nothing.
final class OrderedPublisher<Value: Sendable>: Sendable {
    private struct Queue {
        var pending: [Value] = []
        /// An empty buffer kept for its capacity, swapped with `pending` by the next sender.
        var spare: [Value] = []
        var isSending = false
    }

    /// The subject subscribers see; only the sender in `drain()` sends into it.
    let subject: CurrentValueSubject<Value, Never>
    private let queue = Locked(Queue())

    init(_ initial: Value) { subject = CurrentValueSubject(initial) }

    /// Queues `value` behind the values queued before it.
    func enqueue(_ value: Value) { queue.withLock { $0.pending.append(value) } }

    /// Delivers every queued value in order, unless another drain is already delivering.
    func drain() {
        var batch: [Value] = []
        let becameSender = queue.withLock { queue in
            guard !queue.isSending, !queue.pending.isEmpty else { return false }
            queue.isSending = true
            swap(&batch, &queue.spare)
            swap(&batch, &queue.pending)
            return true
        }
        guard becameSender else { return }
        while true {
            for value in batch { subject.send(value) }
            batch.removeAll(keepingCapacity: true)
            let isDone = queue.withLock { queue in
                if queue.pending.isEmpty {
                    queue.isSending = false
                    swap(&batch, &queue.spare)
                    return true
                }
                swap(&batch, &queue.pending)
                return false
            }
            if isDone { return }
        }
    }
}
