import Synchronization

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
final class Relay<Output: Sendable, Failure: Error, Extra>: @unchecked Sendable {
    // @unchecked Sendable: `guarded` is only touched with `lock` held; `executor` is
    // immutable and Sendable. Exclusivity is checked by the lock, so the runtime check is turned off.
    /// The relay's lock: see `SpinLock`. A user of the relay never holds it while calling out.
    @usableFromInline let lock = SpinLock()
    /// The owner's state and the delivery state, in one stored property: ThreadSanitizer misreads an
    /// access to a zero-sized stored property (an `Extra` of `Void`) as a race with the object's header,
    /// so the only stored access is to this non-empty struct.
    @exclusivity(unchecked) @usableFromInline var guarded: Guarded
    @usableFromInline let executor: (any StreamExecutor)?
    @usableFromInline let hasExecutor: Bool

    /// - Parameters:
    ///   - extra: The owner's own state, guarded by the relay's lock.
    ///   - executor: Runs every drain when given; when nil, the enqueuing thread drains inline.
    ///   - conflatesValues: Replace a value still waiting in the queue with a newer one.
    @inlinable
    init(extra: Extra, executor: (any StreamExecutor)? = nil, conflatesValues: Bool = false) {
        self.guarded = Guarded(extra: extra, delivery: DeliveryState(conflatesValues: conflatesValues))
        self.executor = executor
        self.hasExecutor = executor != nil
    }

    @usableFromInline
    struct Guarded {
        @usableFromInline var extra: Extra
        @usableFromInline var delivery: DeliveryState<Output, Failure>

        @inlinable
        init(extra: Extra, delivery: DeliveryState<Output, Failure>) {
            self.extra = extra
            self.delivery = delivery
        }

        @inlinable
        mutating func apply<R>(_ body: (inout Extra, inout DeliveryState<Output, Failure>) -> R) -> R {
            body(&extra, &delivery)
        }
    }

    /// This relay as its subscribers' owner, with specialized entry points (see `SubscriberOwner`).
    @inlinable
    var owner: SubscriberOwner<Output, Failure> {
        SubscriberOwner(
            object: self,
            remove: { subscriber, waiting in
                unsafeDowncast(subscriber.owner.object, to: Relay.self).remove(subscriber, waiting: waiting)
            },
            didComplete: { subscriber in
                unsafeDowncast(subscriber.owner.object, to: Relay.self).didComplete(subscriber)
            }
        )
    }

    /// Runs `body` under the lock, then delivers whatever it enqueued (outside the lock).
    @inlinable
    @discardableResult
    func update<R>(_ body: (inout Extra, inout DeliveryState<Output, Failure>) -> R) -> R {
        lock.lock()
        let result = guarded.apply(body)
        let action = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        perform(action)
        return result
    }

    /// Runs `body` under the lock; the value it returns, if any, is sent (as by `send(_:)`) in the same
    /// critical section. The common shape of an operator step, with the fast path of `send`.
    @inlinable
    func update(emitting body: (inout Extra) -> Output?) {
        lock.lock()
        if let value = body(&guarded.extra) {
            sendLocked(value)
        } else {
            lock.unlock()
        }
    }

    /// Reads or changes the owner's state under the lock, without delivering anything.
    @inlinable
    func withExtra<R>(_ body: (inout Extra) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&guarded.extra)
    }

    /// Whether any subscriber is attached.
    @inlinable
    var hasSubscribers: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !guarded.delivery.subscribers.isEmpty
    }

    /// Sends a value to every attached subscriber (ignored after a completion).
    @inlinable
    func send(_ value: Output) {
        lock.lock()
        sendLocked(value)
    }

    /// `send` with the lock already held; releases it.
    ///
    /// Fast path: an idle relay without an executor has an empty queue (an idle relay with queued events
    /// would have claimed a drain), so the value is delivered directly, without passing through the queue.
    @inlinable
    func sendLocked(_ value: Output) {
        if !hasExecutor && !guarded.delivery.isDraining {
            guard !guarded.delivery.isTerminated else {
                lock.unlock()
                return
            }
            guarded.delivery.isDraining = true
            guarded.delivery.drainer = .current
            let subscribers = guarded.delivery.borrowSubscribers()
            lock.unlock()
            DeliveryState.deliver(value, to: subscribers)
            continueDraining()
            return
        }
        guarded.delivery.enqueue(value)
        let action = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        perform(action)
    }

    @inlinable
    func send(completion: StreamCompletion<Failure>) {
        lock.lock()
        guarded.delivery.enqueue(completion: completion)
        let action = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        perform(action)
    }

    /// Creates a subscriber and its token: the subscription a subject hands out.
    ///
    /// The token knows its subscriber, so at completion the relay can take the subscriber out of the token
    /// and release the callbacks (and what they captured) even while the user keeps the token.
    @inlinable
    func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void,
        initialValue: ((inout Extra) -> Output?)? = nil
    ) -> SubscriptionToken {
        // The new subscriber moves straight into its token, and is borrowed from there: one
        // retain/release pair less than keeping a local reference (measured: churn benchmark P3).
        let token = SubscriptionToken(Subscriber(owner: owner, onValue: onValue, onCompletion: onCompletion))
        token.target.load(ordering: .relaxed).unsafelyUnwrapped._withUnsafeGuaranteedRef { target in
            let subscriber = unsafeDowncast(target, to: Subscriber<Output, Failure>.self)
            subscriber.token = Unmanaged.passUnretained(token)
            if let initialValue {
                attach(subscriber, initialValue: initialValue)
            } else {
                attach(subscriber)
            }
        }
        return token
    }

    /// Creates and attaches a subscriber that receives the events enqueued from now on.
    @inlinable
    func attach(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> Subscriber<Output, Failure> {
        let subscriber = Subscriber(owner: owner, onValue: onValue, onCompletion: onCompletion)
        attach(subscriber)
        return subscriber
    }

    /// Attaches a subscriber that receives the events enqueued from now on.
    ///
    @inlinable
    func attach(_ subscriber: Subscriber<Output, Failure>) {
        lock.lock()
        guarded.delivery.attach(subscriber)
        let action = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        perform(action)
    }

    /// Attaches a subscriber that first receives `initialValue(&extra)` (unless the relay has terminated),
    /// read under the lock in the same critical section as the attach, so no value is missed or repeated
    /// between them. Delivered at once when the relay is idle, otherwise queued before any later event.
    @inlinable
    func attach(_ subscriber: Subscriber<Output, Failure>, initialValue: (inout Extra) -> Output?) {
        lock.lock()
        let initial = guarded.delivery.isTerminated ? nil : initialValue(&guarded.extra)
        guarded.delivery.attach(subscriber)
        if let initial {
            if !hasExecutor && !guarded.delivery.isDraining {
                guarded.delivery.isDraining = true
                guarded.delivery.drainer = .current
                lock.unlock()
                subscriber.receive(initial)
                continueDraining()
                return
            }
            guarded.delivery.queue.append(.targeted(subscriber, [initial], nil))
        }
        let action = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        perform(action)
    }

    /// Creates and attaches a subscriber that first receives `initialValues(&extra)`, read under the lock
    /// in the same critical section as the attach (so no value is missed or repeated between them).
    @inlinable
    func attach(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void,
        initialValues: (inout Extra) -> [Output]
    ) -> Subscriber<Output, Failure> {
        let subscriber = Subscriber(owner: owner, onValue: onValue, onCompletion: onCompletion)
        update { extra, delivery in
            delivery.attach(subscriber, initialValues: initialValues(&extra))
        }
        return subscriber
    }

    /// Takes a completed subscriber out of its token, so the token no longer keeps its callbacks alive.
    @inlinable
    func didComplete(_ subscriber: Subscriber<Output, Failure>) {
        lock.lock()
        var tookFromToken = false
        if let token = subscriber.token {
            subscriber.token = nil
            // Safe to touch the token: it cannot finish deinitializing while we hold the lock (its deinit
            // detaches this subscriber under the lock first, which clears `subscriber.token`).
            tookFromToken = token._withUnsafeGuaranteedRef { token in
                token.target.compareExchange(
                    expected: Unmanaged<Cancellation>.passUnretained(subscriber),
                    desired: nil,
                    ordering: .acquiringAndReleasing
                ).exchanged
            }
        }
        lock.unlock()
        // The token's reference is ours now; dropping it may run deinits, so outside the lock.
        if tookFromToken { Unmanaged<Cancellation>.passUnretained(subscriber).release() }
    }

    @inlinable
    func remove(_ subscriber: Subscriber<Output, Failure>, waiting: Bool) {
        lock.lock()
        let isDraining = guarded.delivery.detach(subscriber)
        if waiting && isDraining, case let caller = ThreadID.current,
            guarded.delivery.isDeliveringOnAnotherThread(than: caller)
        {
            // Wait until the event in flight on the other thread has been delivered. Rare (an
            // invalidation racing a delivery) and short (one callback), so it polls with backoff instead
            // of parking on a condition.
            let round = guarded.delivery.round
            var backoff = Backoff()
            while guarded.delivery.round == round && guarded.delivery.isDeliveringOnAnotherThread(than: caller) {
                lock.unlock()
                backoff.pause()
                lock.lock()
            }
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
            DeliveryState.deliver(event, to: snapshot)
            continueDraining()
        }
    }

    @inlinable
    func runScheduledDrain() {
        lock.lock()
        let action = guarded.delivery.beginScheduledDrain()
        lock.unlock()
        if case .deliver(let event, let snapshot) = action {
            DeliveryState.deliver(event, to: snapshot)
            continueDraining()
        }
    }

    /// The drainer finished an event: deliver the next ones until the queue is empty.
    @inlinable
    func continueDraining() {
        while true {
            lock.lock()
            // Fast path: nothing was queued or retired meanwhile, so the relay simply goes idle.
            if _fastPath(guarded.delivery.queue.isEmpty && guarded.delivery.retired.isEmpty) {
                guarded.delivery.round &+= 1
                guarded.delivery.isDraining = false
                guarded.delivery.drainer = nil
                lock.unlock()
                return
            }
            var retired: [ContiguousArray<Subscriber<Output, Failure>>] = []
            let action = guarded.delivery.next(releasing: &retired)
            lock.unlock()
            // `retired` is released here, outside the lock (releasing subscribers may run deinits).
            guard case .deliver(let event, let subscribers) = action else { return }
            DeliveryState.deliver(event, to: subscribers)
        }
    }
}
