import SyncStreams

/// Publishes a state's successive values through a `CurrentValueSubject` in exactly the order they were
/// decided, without calling out under the lock that decided them, optionally on an executor.
///
/// The owner decides a new value under its own lock and calls `enqueue` there (cheap, never calls out);
/// after unlocking it calls `drain()`. The first drain to find no sender becomes the sender and sends
/// queued values until the queue is empty; a drain arriving meanwhile (from another thread, or re-entering
/// from a subscriber's callback) returns at once and the sender delivers its value. So two threads
/// changing the state one after the other can never publish the older value last, every value is
/// published (none skipped), and a subscriber that changes the state from inside its callback does not
/// deadlock.
///
/// With an `executor`, `drain()` only schedules the sending on it: subscribers are called there, never on
/// the thread (or actor) that changed the state, so a subscriber that blocks delays nobody but the
/// executor's other work. `current` is the latest value enqueued, ahead of what subscribers have seen.
///
/// Cost: one lock round trip to enqueue and two per drain; the queue and the sender's batch swap buffers,
/// so the steady state allocates nothing.
final class OrderedPublisher<Value: Sendable>: Sendable {
    private struct Queue: Sendable {
        var pending: [Value] = []
        /// An empty buffer kept for its capacity, swapped with `pending` by the next sender.
        var spare: [Value] = []
        var isSending = false
        var current: Value
        /// `finish()` was called: later values are not queued; the completion follows the queued ones.
        var isFinishing = false
        /// The completion was sent (or is being sent).
        var isFinished = false
    }

    /// The subject subscribers see; only the sender sends into it.
    let subject: CurrentValueSubject<Value, Never>
    private let queue: Locked<Queue>
    private let executor: (any StreamExecutor)?

    init(_ initial: Value, executor: (any StreamExecutor)? = nil) {
        subject = CurrentValueSubject(initial)
        queue = Locked(Queue(current: initial))
        self.executor = executor
    }

    /// The latest value enqueued.
    var current: Value { queue.withLock { $0.current } }

    /// Queues `value` behind the values queued before it.
    func enqueue(_ value: Value) {
        queue.withLock { queue in
            guard !queue.isFinishing else { return }
            queue.pending.append(value)
            queue.current = value
        }
    }

    /// Ends the stream: subscribers receive the values queued before, then the completion (on the executor,
    /// when there is one); values queued later are dropped, and a later subscriber receives only the
    /// completion. Idempotent.
    func finish() {
        queue.withLock { $0.isFinishing = true }
        drain()
    }

    /// Delivers every queued value in order (on the executor, when there is one), unless another drain
    /// is already delivering.
    func drain() {
        if let executor {
            executor.execute { self.send() }
        } else {
            send()
        }
    }

    private func send() {
        var batch: [Value] = []
        let becameSender = queue.withLock { queue in
            guard !queue.isSending, !queue.pending.isEmpty || (queue.isFinishing && !queue.isFinished) else {
                return false
            }
            queue.isSending = true
            swap(&batch, &queue.spare)
            swap(&batch, &queue.pending)
            return true
        }
        guard becameSender else { return }
        while true {
            for value in batch { subject.send(value) }
            batch.removeAll(keepingCapacity: true)
            let (isDone, completes) = queue.withLock { queue in
                if queue.pending.isEmpty {
                    queue.isSending = false
                    swap(&batch, &queue.spare)
                    let completes = queue.isFinishing && !queue.isFinished
                    if completes { queue.isFinished = true }
                    return (true, completes)
                }
                swap(&batch, &queue.pending)
                return (false, false)
            }
            if completes { subject.send(completion: .finished) }
            if isDone { return }
        }
    }
}

extension OrderedPublisher where Value: Equatable {
    /// The state as a `StateStream`: `value` is `current`, subscribers get the published values.
    var stateStream: StateStream<Value> {
        StateStream(subject) { [self] in current }
    }
}
