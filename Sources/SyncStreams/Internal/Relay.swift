/// Lock + `DeliveryState` + the drain loop: the engine under every subject and every operator that has
/// state or delivers from more than one thread.
///
/// `Extra` is the owning stream's or operator's own state, guarded by the same lock, so an operator can
/// change its state and enqueue the resulting events in one critical section (which keeps the order of
/// events equal to the order of state changes) and still call out only after unlocking.
///
/// Delivery: the thread that enqueues into an idle relay drains it inline (or, with an executor, the
/// executor runs the drain). While a drain runs, other senders (other threads, or callbacks re-entering)
/// only enqueue. `remove(_:waiting: true)` from another thread waits until the event in flight has been
/// delivered, which is what makes "no callback starts after `invalidate()` returns" hold.
@usableFromInline
final class Relay<Output: Sendable, Failure: Error, Extra>: SubscriberOwner, @unchecked Sendable {
    // @unchecked Sendable: `delivery` and `extra` are only touched with `lock` held; `executor` is
    // immutable and Sendable.
    @usableFromInline let lock = Lock()
    @usableFromInline var delivery: DeliveryState<Output, Failure>
    @usableFromInline var extra: Extra
    @usableFromInline let executor: (any StreamExecutor)?

    /// - Parameters:
    ///   - extra: The owner's own state, guarded by the relay's lock.
    ///   - executor: Runs every drain when given; when nil, the enqueuing thread drains inline.
    ///   - conflatesValues: Replace a value still waiting in the queue with a newer one.
    @inlinable
    init(extra: Extra, executor: (any StreamExecutor)? = nil, conflatesValues: Bool = false) {
        self.extra = extra
        self.executor = executor
        self.delivery = DeliveryState(conflatesValues: conflatesValues)
    }

    /// Runs `body` under the lock, then delivers whatever it enqueued (outside the lock).
    @inlinable
    @discardableResult
    func update<R>(_ body: (inout Extra, inout DeliveryState<Output, Failure>) -> R) -> R {
        lock.lock()
        let result = body(&extra, &delivery)
        let action = delivery.claim(byExecutor: executor != nil)
        lock.unlock()
        perform(action)
        return result
    }

    /// Reads or changes the owner's state under the lock, without delivering anything.
    @inlinable
    func withExtra<R>(_ body: (inout Extra) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&extra)
    }

    /// Whether any subscriber is attached.
    @inlinable
    var hasSubscribers: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !delivery.subscribers.isEmpty
    }

    @inlinable
    func send(_ value: Output) {
        lock.lock()
        delivery.enqueue(value)
        let action = delivery.claim(byExecutor: executor != nil)
        lock.unlock()
        perform(action)
    }

    @inlinable
    func send(completion: StreamCompletion<Failure>) {
        lock.lock()
        delivery.enqueue(completion: completion)
        let action = delivery.claim(byExecutor: executor != nil)
        lock.unlock()
        perform(action)
    }

    /// Attaches a subscriber that receives the events enqueued from now on.
    ///
    /// (Like `send`, this does not touch `extra`: ThreadSanitizer misreads accesses to a zero-sized
    /// `Extra` such as `Void` as races with the object's header.)
    @inlinable
    func attach(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> Subscriber<Output, Failure> {
        let subscriber = Subscriber(owner: self, onValue: onValue, onCompletion: onCompletion)
        lock.lock()
        delivery.attach(subscriber)
        let action = delivery.claim(byExecutor: executor != nil)
        lock.unlock()
        perform(action)
        return subscriber
    }

    /// Attaches a subscriber that first receives `initialValues(&extra)`, read under the lock in the same
    /// critical section as the attach (so no value is missed or repeated between them).
    @inlinable
    func attach(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void,
        initialValues: (inout Extra) -> [Output]
    ) -> Subscriber<Output, Failure> {
        let subscriber = Subscriber(owner: self, onValue: onValue, onCompletion: onCompletion)
        update { extra, delivery in
            delivery.attach(subscriber, initialValues: initialValues(&extra))
        }
        return subscriber
    }

    @usableFromInline
    func remove(_ subscriber: Subscriber<Output, Failure>, waiting: Bool) {
        let caller = ThreadID.current
        lock.lock()
        let mustWait = delivery.detach(subscriber, caller: caller) && waiting
        if mustWait {
            let round = delivery.round
            delivery.waiters += 1
            while delivery.round == round && delivery.isDeliveringOnAnotherThread(than: caller) {
                lock.wait()
            }
            delivery.waiters -= 1
        }
        lock.unlock()
    }

    @inlinable
    func perform(_ action: DeliveryAction<Output, Failure>) {
        switch action {
        case .none:
            return
        case .schedule:
            executor!.execute { self.runScheduledDrain() }
        case .deliver(let event, let snapshot):
            drain(event, snapshot)
        }
    }

    @usableFromInline
    func runScheduledDrain() {
        lock.lock()
        let action = delivery.beginScheduledDrain()
        lock.unlock()
        if case .deliver(let event, let snapshot) = action { drain(event, snapshot) }
    }

    @inlinable
    func drain(
        _ firstEvent: DeliveryEvent<Output, Failure>,
        _ firstSnapshot: ContiguousArray<Subscriber<Output, Failure>>
    ) {
        var event = firstEvent
        var snapshot = firstSnapshot
        while true {
            DeliveryState.deliver(event, to: snapshot)
            lock.lock()
            let action = delivery.next()
            if delivery.waiters > 0 { lock.broadcast() }
            lock.unlock()
            guard case .deliver(let nextEvent, let nextSnapshot) = action else { return }
            event = nextEvent
            snapshot = nextSnapshot
        }
    }
}
