import SyncStreams

/// A FIFO between producers on any thread and one consumer task, that keeps count of the cost (bytes) of
/// what it holds, so the producer side can apply backpressure.
///
/// - `push` never blocks and never drops: it reports the queued cost after the push, and the producer
///   decides what to do about it (wait with `waitUntilDrained()`, stop reading a socket, or give up on
///   a consumer that does not read — see `hardLimit`).
/// - `next()` returns the oldest element, suspending while the queue is empty; `nil` once the queue was
///   finished and everything queued before `finish()` was taken. It returns `nil` at once when the
///   consuming task is cancelled.
/// - `waitUntilDrained()` suspends until the queued cost is at most `lowWater` (or the queue finished),
///   so a producer that waits before each push keeps at most `lowWater` plus one element queued.
/// - `onDrained`, when set, is called (outside the lock, on the consumer's thread) each time a `next()`
///   takes the cost from above `highWater` to at most `lowWater`: the signal a socket reader that paused
///   at the high mark uses to resume.
///
/// `stream` adapts it to `AsyncStream` with `AsyncStream(unfolding:)`, which asks for each element only
/// when the consumer wants it: elements wait here, counted, rather than in the stream's own buffer.
package final class MessageQueue<Element: Sendable>: Sendable {
    private struct Entry {
        var element: Element
        var cost: Int
    }

    private struct State {
        var entries: [Entry?] = []
        var head = 0
        var cost = 0
        var isFinished = false
        var wasAboveHighWater = false
        var consumer: CheckedContinuation<Element?, Never>?
        var drainWaiters: [CheckedContinuation<Void, Never>] = []

        var isEmpty: Bool { head == entries.count }

        mutating func popFirst() -> Entry? {
            guard !isEmpty else { return nil }
            let entry = entries[head]
            entries[head] = nil
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
            cost -= entry?.cost ?? 0
            return entry
        }

        /// Takes the oldest element if there is one, with the drain waiters to wake and whether
        /// `onDrained` is due.
        mutating func take(highWater: Int, lowWater: Int) -> Taken? {
            guard let entry = popFirst() else { return nil }
            var waiters: [CheckedContinuation<Void, Never>] = []
            if cost <= lowWater && !drainWaiters.isEmpty {
                waiters = drainWaiters
                drainWaiters = []
            }
            var drained = false
            if wasAboveHighWater && cost <= lowWater {
                wasAboveHighWater = false
                drained = true
            }
            return Taken(element: entry.element, waiters: waiters, drained: drained)
        }
    }

    /// Above this cost the producer should stop producing; `onDrained` fires when it falls back to `lowWater`.
    package let highWater: Int
    /// `waitUntilDrained()` returns once the cost is at most this.
    package let lowWater: Int
    private let state = Locked(State())
    private let drained: (@Sendable () -> Void)?

    /// A queue with the given marks (`lowWater` is clamped to `0...highWater`).
    package init(highWater: Int, lowWater: Int, onDrained: (@Sendable () -> Void)? = nil) {
        self.highWater = max(0, highWater)
        self.lowWater = min(max(0, lowWater), self.highWater)
        self.drained = onDrained
    }

    /// The total cost of the elements queued and not yet taken.
    package var queuedCost: Int { state.withLock { $0.cost } }

    /// How many `waitUntilDrained()` calls are suspended (tests see a producer parked at the mark).
    package var drainWaiterCount: Int { state.withLock { $0.drainWaiters.count } }

    /// Whether `finish()` was called.
    package var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Appends `element` unless the queue is finished. Returns the queued cost after the push, or `nil`
    /// when the queue is finished (the element was not queued).
    @discardableResult
    package func push(_ element: Element, cost: Int = 0) -> Int? {
        let (consumer, total) = state.withLock { state -> (CheckedContinuation<Element?, Never>?, Int?) in
            guard !state.isFinished else { return (nil, nil) }
            if let consumer = state.consumer {
                state.consumer = nil
                return (consumer, state.cost)
            }
            state.entries.append(Entry(element: element, cost: max(0, cost)))
            state.cost += max(0, cost)
            if state.cost > highWater { state.wasAboveHighWater = true }
            return (nil, state.cost)
        }
        consumer?.resume(returning: element)
        return total
    }

    /// Ends the queue: later pushes are refused; the consumer takes what is queued, then gets `nil`.
    /// Waiters of `waitUntilDrained()` return. Idempotent.
    package func finish() {
        let (consumer, waiters) = state.withLock { state in
            state.isFinished = true
            defer {
                state.consumer = nil
                state.drainWaiters = []
            }
            return (state.isEmpty ? state.consumer : nil, state.drainWaiters)
        }
        consumer?.resume(returning: nil)
        for waiter in waiters { waiter.resume() }
    }

    /// The oldest element; suspends while the queue is empty; `nil` once finished and empty, or when the
    /// calling task is cancelled. One consumer at a time.
    package func next() async -> Element? {
        if Task.isCancelled { return nil }
        if let taken = state.withLock({ $0.take(highWater: highWater, lowWater: lowWater) }) {
            finishTaking(taken)
            return taken.element
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let ready = state.withLock { state -> Taken? in
                    if let taken = state.take(highWater: highWater, lowWater: lowWater) { return taken }
                    if state.isFinished || Task.isCancelled { return Taken(element: nil, waiters: [], drained: false) }
                    state.consumer = continuation
                    return nil
                }
                if let ready {
                    finishTaking(ready)
                    continuation.resume(returning: ready.element)
                }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    /// Suspends until the queued cost is at most `lowWater`, or the queue is finished.
    package func waitUntilDrained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.isFinished || state.cost <= lowWater { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// The queue as an `AsyncStream` that pulls one element at a time (see the type's documentation).
    package var stream: AsyncStream<Element> {
        AsyncStream(unfolding: { await self.next() })
    }

    // MARK: Taking

    private struct Taken {
        var element: Element?
        var waiters: [CheckedContinuation<Void, Never>]
        var drained: Bool
    }

    private func finishTaking(_ taken: Taken) {
        for waiter in taken.waiters { waiter.resume() }
        if taken.drained { drained?() }
    }
}
