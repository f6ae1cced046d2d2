/// An event waiting in a relay's queue.
@usableFromInline
enum DeliveryEvent<Output: Sendable, Failure: Error> {
    /// A value for every subscriber attached before it was sent (generation below `generation`).
    case value(Output, generation: UInt64)
    /// The completion for every subscriber attached before it was sent.
    case completion(StreamCompletion<Failure>, generation: UInt64)
    /// Values (a replay, or a current value) and possibly a completion, for one new subscriber.
    case targeted(Subscriber<Output, Failure>, [Output], StreamCompletion<Failure>?)
}

/// What the caller of a `DeliveryState` transition must do once it has released the lock.
@usableFromInline
enum DeliveryAction<Output: Sendable, Failure: Error> {
    /// Nothing: no event is waiting, or another thread is already delivering.
    case none
    /// Deliver this event to these subscribers, then ask `next()` for more. The buffer is borrowed from
    /// the state's subscriber array, which nobody mutates in place or frees while a drain runs (see
    /// `retired`); it stays valid until the drainer's next transition.
    case deliver(DeliveryEvent<Output, Failure>, UnsafeBufferPointer<Subscriber<Output, Failure>>)
    /// Ask the executor to run a drain.
    case schedule
}

/// The state machine behind every relay: subscribers, the queue of undelivered events, and who drains it.
///
/// Serialization comes from a single drainer: whoever enqueues into an idle state becomes the drainer
/// (or, with an executor, schedules one) and delivers events one at a time until the queue is empty. A
/// send from another thread or from inside a callback only enqueues, so it never blocks and never
/// reorders. Every transition runs under the owning relay's lock and returns what to do next; the relay
/// performs it after unlocking.
@usableFromInline
struct DeliveryState<Output: Sendable, Failure: Error> {
    @usableFromInline var subscribers: ContiguousArray<Subscriber<Output, Failure>> = []
    @usableFromInline var queue = FIFO<DeliveryEvent<Output, Failure>>()
    /// A drain is running or scheduled.
    @usableFromInline var isDraining = false
    /// The thread running the drain; nil while idle or while a drain is scheduled but not yet running.
    @usableFromInline var drainer: ThreadID?
    /// Counts delivered events, so a waiting `remove` can tell the event in flight has been delivered.
    @usableFromInline var round: UInt64 = 0
    /// Subscriber arrays replaced while a drain runs: kept alive until the drainer finishes the event it
    /// is delivering, because it reads the array it borrowed without retaining it (which saves a
    /// retain/release pair per value). Handed to the drainer by `next()`, to be released outside the lock.
    @usableFromInline var retired: [ContiguousArray<Subscriber<Output, Failure>>] = []
    /// A completion has been enqueued: nothing more is accepted.
    @usableFromInline var isTerminated = false
    @usableFromInline var terminalCompletion: StreamCompletion<Failure>?
    /// Incremented at each attach; an event reaches only subscribers attached before it was enqueued.
    @usableFromInline var generation: UInt64 = 0
    /// With `true`, a value still waiting in the queue is replaced by a newer one.
    @usableFromInline let conflatesValues: Bool

    @inlinable
    init(conflatesValues: Bool = false) { self.conflatesValues = conflatesValues }

    /// Enqueues a value; returns false (and drops it) after a completion.
    @inlinable
    @discardableResult
    mutating func enqueue(_ value: Output) -> Bool {
        guard !isTerminated else { return false }
        if conflatesValues, case .value(_, let waitingGeneration)? = queue.last, waitingGeneration == generation {
            queue.last = .value(value, generation: generation)
        } else {
            queue.append(.value(value, generation: generation))
        }
        return true
    }

    /// Enqueues the completion; returns false if one was already enqueued.
    @inlinable
    @discardableResult
    mutating func enqueue(completion: StreamCompletion<Failure>) -> Bool {
        guard !isTerminated else { return false }
        isTerminated = true
        terminalCompletion = completion
        queue.append(.completion(completion, generation: generation))
        return true
    }

    /// Attaches a subscriber, which first receives `initialValues` (in order), then every later event.
    ///
    /// After termination the subscriber receives only the completion, and is not kept.
    @inlinable
    mutating func attach(_ subscriber: Subscriber<Output, Failure>, initialValues: [Output] = []) {
        subscriber.generation = generation
        generation &+= 1
        if let completion = terminalCompletion {
            queue.append(.targeted(subscriber, [], completion))
        } else {
            retireSubscribersIfDraining()
            subscribers.append(subscriber)
            if !initialValues.isEmpty { queue.append(.targeted(subscriber, initialValues, nil)) }
        }
    }

    /// Detaches a subscriber; returns whether a drain is running (then a caller that must not return
    /// while a callback runs on another thread checks `isDeliveringOnAnotherThread`).
    @inlinable
    mutating func detach(_ subscriber: Subscriber<Output, Failure>) -> Bool {
        subscriber.markCancelled()
        subscriber.token = nil
        var index = subscribers.count - 1
        while index >= 0 {
            if subscribers[index] === subscriber {
                retireSubscribersIfDraining()
                subscribers.remove(at: index)
                break
            }
            index -= 1
        }
        return isDraining
    }

    /// Before changing `subscribers` during a drain: keep the current array alive (the drainer may be
    /// reading it), which also makes the coming mutation copy it instead of changing it in place.
    @inlinable
    mutating func retireSubscribersIfDraining() {
        if isDraining { retired.append(subscribers) }
    }

    /// The drainer's view of the subscribers, borrowed without retaining; see `retired`.
    @inlinable
    func borrowSubscribers() -> UnsafeBufferPointer<Subscriber<Output, Failure>> {
        subscribers.withUnsafeBufferPointer { $0 }
    }

    @inlinable
    func isDeliveringOnAnotherThread(than caller: ThreadID) -> Bool {
        guard isDraining, let drainer else { return false }
        return drainer != caller
    }

    /// After any transition that may have enqueued: start draining if the queue is idle and non-empty.
    @inlinable
    mutating func claim(byExecutor: Bool) -> DeliveryAction<Output, Failure> {
        guard !isDraining, !queue.isEmpty else { return .none }
        isDraining = true
        if byExecutor {
            drainer = nil
            return .schedule
        }
        drainer = .current
        return popForDelivery()
    }

    /// A scheduled drain starts running on the current thread.
    @inlinable
    mutating func beginScheduledDrain() -> DeliveryAction<Output, Failure> {
        drainer = .current
        return popForDelivery()
    }

    /// The drainer finished delivering one event: the next one, or idle. Also hands over the retired
    /// subscriber arrays, which the caller releases after unlocking.
    @inlinable
    mutating func next(
        releasing retiredOut: inout [ContiguousArray<Subscriber<Output, Failure>>]
    ) -> DeliveryAction<Output, Failure> {
        round &+= 1
        if !retired.isEmpty { swap(&retired, &retiredOut) }
        return popForDelivery()
    }

    @inlinable
    mutating func popForDelivery() -> DeliveryAction<Output, Failure> {
        guard let event = queue.popFirst() else {
            isDraining = false
            drainer = nil
            return .none
        }
        switch event {
        case .value:
            return .deliver(event, borrowSubscribers())
        case .completion:
            // Every subscriber is done: the array moves to `retired` (alive until this event is
            // delivered) and the list empties.
            retired.append(subscribers)
            subscribers = []
            return .deliver(event, retired[retired.count - 1].withUnsafeBufferPointer { $0 })
        case .targeted:
            return .deliver(event, UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// Delivers one event to borrowed subscribers. Runs outside the lock.
    @inlinable
    static func deliver(
        _ event: DeliveryEvent<Output, Failure>,
        to subscribers: UnsafeBufferPointer<Subscriber<Output, Failure>>
    ) {
        switch event {
        case .value(let value, let generation):
            forEach(in: subscribers) { subscriber in
                if subscriber.generation < generation { subscriber.receive(value) }
            }
        case .completion(let completion, let generation):
            forEach(in: subscribers) { subscriber in
                if subscriber.generation < generation { subscriber.receive(completion: completion) }
            }
        case .targeted(let subscriber, let values, let completion):
            for value in values { subscriber.receive(value) }
            if let completion { subscriber.receive(completion: completion) }
        }
    }

    /// Delivers a value to every borrowed subscriber, borrowed while the queue was empty (so every one
    /// of them was attached before the value was sent).
    @inlinable
    static func deliver(_ value: Output, to subscribers: UnsafeBufferPointer<Subscriber<Output, Failure>>) {
        forEach(in: subscribers) { $0.receive(value) }
    }

    /// Visits borrowed subscribers without retaining each one: the array they were borrowed from holds
    /// them all strongly for the whole visit, so reading them as `Unmanaged` (which has the layout of a
    /// strong reference) is safe and saves a retain/release pair per delivery.
    @inlinable @inline(__always)
    static func forEach(
        in subscribers: UnsafeBufferPointer<Subscriber<Output, Failure>>,
        _ body: (Subscriber<Output, Failure>) -> Void
    ) {
        guard let base = subscribers.baseAddress else { return }
        let count = subscribers.count
        base.withMemoryRebound(to: Unmanaged<Subscriber<Output, Failure>>.self, capacity: count) { borrowed in
            for index in 0..<count {
                borrowed[index]._withUnsafeGuaranteedRef(body)
            }
        }
    }
}
