import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lock + `DeliveryState` + the drain loop: the engine under every subject and every operator that has
/// state or delivers from more than one thread.
///
/// `Extra` is the owning stream's or operator's own state (an operator's state machine), guarded by the
/// same lock, so an operator can change its state and enqueue the resulting events in one critical
/// section (which keeps the order of events equal to the order of state changes) and still call out only
/// after unlocking.
///
/// Delivery: the thread that enqueues into an idle relay drains it inline (or, with an executor, the
/// executor runs the drain). While a drain runs, other senders (other threads, or callbacks re-entering)
/// only enqueue. Before each callback the drain publishes which subscriber it is calling
/// (`InFlightCallback`), so `remove(_:waiting: true)` from another thread waits only while *that*
/// subscriber's callback runs — which is what makes "no callback starts after `invalidate()` returns"
/// hold without ever waiting behind another subscriber's callback. A remove from inside any callback
/// never waits (`CallbackScope`).
///
/// Nothing is called, and no user value released, while the lock is held: transitions return what to do
/// and what to release, and the relay does it after unlocking.
@usableFromInline
final class Relay<Output: Sendable, Failure: Error, Extra>: @unchecked Sendable {
    // @unchecked Sendable: `guarded` is only touched with `lock` held; the borrowed subscriber views a
    // drain reads outside the lock are immutable while borrowed (see `SubscriberList`); `executor` is
    // immutable and Sendable. Exclusivity is checked by the lock, so the runtime check is turned off.
    /// Whether drains run on `executor` (read first on every send: kept at the front of the object).
    @usableFromInline let hasExecutor: Bool
    /// The relay's lock: see `ParkingLock`. Never held while calling out.
    @usableFromInline let lock = ParkingLock()
    /// Where the drain is calling, for precise waiting.
    @usableFromInline let inFlightCallback = InFlightCallback()
    /// The owner's state and the delivery state, in one stored property: ThreadSanitizer misreads an
    /// access to a zero-sized stored property (an `Extra` of `Void`) as a race with the object's header,
    /// so the only stored access is to this non-empty struct.
    @exclusivity(unchecked) @usableFromInline var guarded: Guarded
    @usableFromInline let executor: (any StreamExecutor)?

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

    @inlinable
    deinit {
        // Nothing can be borrowing the list: a drain holds the relay alive.
        guarded.delivery.subscribers.destroy()
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

    // MARK: - Changing state and enqueuing

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

    /// One step of an operator's state machine: `body` runs under the lock and returns an action; its
    /// emissions are enqueued in the same critical section (so events leave in the order of the state
    /// changes), delivered after unlocking, and its effect is returned for the operator to perform
    /// outside the lock.
    @inlinable
    @inline(__always)
    func step<Effect>(_ body: (inout Extra) -> OperatorAction<Output, Failure, Effect>) -> Effect? {
        lock.lock()
        let action = body(&guarded.extra)
        if _fastPath(action.completion == nil), let value = action.value {
            // The common shape (one value, no completion): `send`'s fast path.
            sendLocked(value)
            return action.effect
        }
        return stepWithoutFastPath(action)
    }

    /// The rest of `step`, with the lock held: enqueue what the action emits, then deliver it.
    @inlinable
    func stepWithoutFastPath<Effect>(_ action: OperatorAction<Output, Failure, Effect>) -> Effect? {
        var replaced: DeliveryEvent<Output, Failure>?
        if let value = action.value { guarded.delivery.enqueue(value, replaced: &replaced) }
        if let completion = action.completion { guarded.delivery.enqueue(completion: completion) }
        let delivery = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        _ = replaced
        perform(delivery)
        return action.effect
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
    @inlinable @inline(__always)
    func sendLocked(_ value: Output) {
        if _fastPath(!hasExecutor && !guarded.delivery.isDraining && !guarded.delivery.isTerminated) {
            let (subscribers, serial) = guarded.delivery.claimForDirectDelivery()
            lock.unlock()
            CallbackScope.enter()
            deliver(value, to: subscribers, serial: serial)
            continueDraining()
            return
        }
        enqueueLocked(value)
    }

    /// `sendLocked` when the value goes through the queue (a drain runs or is scheduled, or the relay has
    /// an executor), or is dropped (after a completion). Releases the lock.
    @inlinable
    func enqueueLocked(_ value: Output) {
        var replaced: DeliveryEvent<Output, Failure>?
        guarded.delivery.enqueue(value, replaced: &replaced)
        let action = guarded.delivery.claim(byExecutor: hasExecutor)
        lock.unlock()
        _ = replaced
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

    // MARK: - Subscribers

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
        // The new subscriber moves straight into its token and is borrowed from there: one retain/release
        // pair less than keeping a local reference (measured: churn benchmark P3). Sound: the token, a
        // local alive for the whole closure, holds the reference `target` borrows; the only thing that can
        // take it out of the token meanwhile is a completion delivered during `attach` (`didComplete`), and
        // the closure does not touch `target` after `attach` returns.
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
                let (_, serial) = guarded.delivery.claimForDirectDelivery(target: ObjectIdentifier(subscriber))
                lock.unlock()
                CallbackScope.enter()
                _ = serial  // A single-subscriber event: waiters wait for its end (see `InFlightCallback`).
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
            // Safe to touch the token without retaining it: it cannot finish deinitializing while we hold
            // the lock (its deinit detaches this subscriber under the lock first, which clears
            // `subscriber.token`), and retaining an object that may be deinitializing is not allowed.
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

    /// Detaches `subscriber`. With `waiting` — a user's `invalidate()` from outside any callback — it
    /// returns only once the subscriber's callback is not running on another thread; from inside a
    /// callback, or without `waiting`, it returns at once (a callback already started may still finish).
    @inlinable
    func remove(_ subscriber: Subscriber<Output, Failure>, waiting: Bool) {
        lock.lock()
        let released = guarded.delivery.detach(subscriber)
        var wait: InFlightWait?
        if waiting, !CallbackScope.isInsideCallback, let inFlight = guarded.delivery.inFlightWait(for: subscriber) {
            switch inFlight {
            case .eventEnd: guarded.delivery.eventEndWaiters += 1
            case .position: inFlightCallback.registerWaiter()
            }
            wait = inFlight
        }
        lock.unlock()
        released?.release()
        guard let wait else { return }
        #if DEBUG
            RelayWaitObserver.willWait()
        #endif
        switch wait {
        case .eventEnd(let serial):
            inFlightCallback.waitForEventEnd(serial: serial)
        case .position(let position):
            inFlightCallback.waitWhileCalling(position: position)
        }
        #if DEBUG
            RelayWaitObserver.didWait()
        #endif
    }

    // MARK: - Draining

    @inlinable
    func perform(_ action: DeliveryAction<Output, Failure>) {
        switch action {
        case .none:
            return
        case .schedule:
            scheduleDrain()
        case .deliver(let event, let subscribers, let serial):
            CallbackScope.enter()
            deliver(event, to: subscribers, serial: serial)
            continueDraining()
        case .deliverValues(let run, let subscribers):
            CallbackScope.enter()
            deliver(run, to: subscribers)
            continueDraining()
        }
    }

    /// Runs a drain as a job: on the relay's executor, or — for an inline relay handing on the rest of a
    /// long drain — on a global queue. Inlinable, so that the job runs the caller's specialized drain
    /// (unspecialized, every generic type in it is looked up at run time: 30× slower).
    ///
    /// The job is a `DrainJob`, which notices when an executor drops it (releases it without running it:
    /// a shut-down or bounded executor) and returns the relay to idle, so the next event claims a new
    /// drain and delivers what was queued — instead of the relay staying "scheduled" for ever. One small
    /// allocation per job (not per value: a job delivers up to a slice of events).
    ///
    /// An executor that runs the job inside `execute` (`ImmediateExecutor`, or any executor that does so,
    /// always or sometimes) is noticed by the job itself: it runs on the thread that is still inside
    /// `execute`. Such a drain is not bounded — handing the rest to a new job would only nest it one
    /// level deeper on the same stack, until a long enough flood overflowed it.
    ///
    /// A hand-over job (no executor) runs at the quality of service of the thread that hands it over
    /// (`.inheritQoS`), not at the global queue's default: a user-interactive sender's values are not
    /// delivered at a lower priority, nor a background sender's at a higher one.
    @inlinable
    func scheduleDrain() {
        let job = DrainJob(relay: self)
        let run: @Sendable () -> Void = { job.run() }
        let thread = ThreadID.current.raw
        job.schedulingThread.store(thread, ordering: .relaxed)
        if let executor {
            executor.execute(run)
        } else {
            DispatchQueue.global().async(flags: .inheritQoS, execute: run)
        }
        job.schedulingThread.store(0, ordering: .relaxed)
    }

    /// A scheduled drain, as handed to an executor: runs the drain, or — released without having run —
    /// tells the relay its job was dropped.
    @usableFromInline
    final class DrainJob: @unchecked Sendable {
        // @unchecked Sendable: `ran` is written by the one thread that runs the job, and read in `deinit`,
        // after the last release (which orders it after the write).
        @usableFromInline let relay: Relay
        @usableFromInline var ran = false
        /// The thread inside `execute` for this job while it is there (0 otherwise): a job that runs on
        /// that thread meanwhile was run inline by the executor. (Relaxed: the only value a thread can
        /// compare equal to its own identity is one it stored itself.)
        @usableFromInline let schedulingThread = Atomic<UInt>(0)

        @inlinable
        init(relay: Relay) { self.relay = relay }

        @inlinable
        func run() {
            ran = true
            let nested = schedulingThread.load(ordering: .relaxed) == ThreadID.current.raw
            relay.runScheduledDrain(nested: nested)
        }

        @inlinable
        deinit { if !ran { relay.jobWasDropped() } }
    }

    /// The executor released a drain's job without running it: the relay goes back to idle, keeping its
    /// queue, so the next event (a send, an attach) claims a new drain that delivers it all in order.
    @usableFromInline
    func jobWasDropped() {
        lock.lock()
        if guarded.delivery.drainMode == 2 { guarded.delivery.drainMode = 0 }
        lock.unlock()
    }

    /// Runs a scheduled drain. `nested`: the executor runs it inside `execute`, on the thread that
    /// scheduled it: not bounded, and it reads no clock.
    @inlinable
    func runScheduledDrain(nested: Bool) {
        let now = nested ? nil : sliceClock
        lock.lock()
        let action = guarded.delivery.beginScheduledDrain(now: now)
        lock.unlock()
        switch action {
        case .deliver(let event, let subscribers, let serial):
            CallbackScope.enter()
            deliver(event, to: subscribers, serial: serial)
            continueDrainingSlowly(scheduled: true, timed: !nested)
        case .deliverValues(let run, let subscribers):
            CallbackScope.enter()
            deliver(run, to: subscribers)
            continueDrainingSlowly(scheduled: true, timed: !nested)
        case .none, .schedule:
            return
        }
    }

    /// The drainer finished an event: deliver the next ones until the queue is empty or the drain's
    /// budget is spent (then the rest is scheduled). Leaves the callback scope the drain entered.
    @inlinable @inline(__always)
    func continueDraining() {
        lock.lock()
        // Fast path: nothing was queued or retired meanwhile and nobody waits, in an inline drain: the
        // relay simply goes idle. (`inFlight` and `inFlightTarget` are left as they are: read only while
        // a drain runs, and set afresh when the next event starts.)
        if _fastPath(
            guarded.delivery.drainMode == 1 && guarded.delivery.queue.isEmpty
                && guarded.delivery.subscribers.hasNoLeftovers && guarded.delivery.eventEndWaiters == 0)
        {
            guarded.delivery.subscribers.isBorrowed = false
            guarded.delivery.drainMode = 0
            lock.unlock()
            CallbackScope.leave()
            return
        }
        lock.unlock()
        continueDrainingSlowly(scheduled: false, timed: false)
    }

    /// The time a scheduled drain's slice is measured in: its executor's clock (a hand-over job without
    /// an executor: the monotonic clock). Read outside the lock (an executor's clock is its own code).
    @inlinable
    var sliceClock: StreamInstant { executor?.now ?? .monotonicNow }

    /// The drain loop beyond the inline fast path: more events, leftovers to dispose of, waiters to wake,
    /// a scheduled drain's lingering, budget and time slice. `scheduled`: this drain runs as a job;
    /// `timed`: it is bounded by a time slice (not a job an executor runs nested in `execute`).
    @inlinable
    func continueDrainingSlowly(scheduled: Bool, timed: Bool) {
        var lingered = 0
        // An inline drain reads the clock only once other threads have queued events during it (see
        // `DeliveryState.next`): set after each step, under the lock.
        var contended = false
        while true {
            // A job reads the clock once per event or run of values, to end when its slice is over; a
            // contended inline drain reads the monotonic clock as often, to end when its slice is over.
            let now = timed ? sliceClock : contended ? StreamInstant.monotonicNow : nil
            lock.lock()
            // Fast path: nothing was queued or retired meanwhile, so the relay simply goes idle.
            // (`inFlight` and `inFlightTarget` are left as they are: read only while a drain runs, and set
            // afresh when the next event starts.)
            if _fastPath(
                guarded.delivery.queue.isEmpty && guarded.delivery.subscribers.hasNoLeftovers
                    && guarded.delivery.eventEndWaiters == 0)
            {
                if guarded.delivery.isScheduledDrain && lingered < Self.lingerRounds {
                    // A job that emptied the queue yields the processor and looks again before it ends: a
                    // producer about as fast as its consumer then costs no new job (a dispatch and a thread
                    // wake-up, microseconds) every few values.
                    lock.unlock()
                    lingered += 1
                    sched_yield()
                    continue
                }
                guarded.delivery.subscribers.isBorrowed = false
                guarded.delivery.drainMode = 0
                lock.unlock()
                CallbackScope.leave()
                return
            }
            var leftovers: SubscriberListLeftovers<Output, Failure>?
            var endedEvent: UInt64?
            let action = guarded.delivery.next(
                now: now, leftovers: &leftovers, endedEventWithWaiters: &endedEvent)
            // Announced under the lock, so announcements are stored in the order of the events even when
            // the next event's drainer is another thread (this one may be preempted after unlocking).
            if let endedEvent { inFlightCallback.announceEventEnd(serial: endedEvent) }
            if !scheduled { contended = guarded.delivery.foreignEnqueued > 0 }
            lock.unlock()
            if endedEvent != nil { inFlightCallback.wakeEventEndWaiters() }
            // Freed and released here, outside the lock (releasing subscribers may run deinits).
            leftovers?.dispose()
            switch action {
            case .deliver(let event, let subscribers, let serial):
                deliver(event, to: subscribers, serial: serial)
            case .deliverValues(let run, let subscribers):
                deliver(run, to: subscribers)
            case .schedule:
                CallbackScope.leave()
                scheduleDrain()
                return
            case .none:
                CallbackScope.leave()
                return
            }
        }
    }

    /// How many times a job that emptied the queue yields and looks again before it ends.
    @inlinable static var lingerRounds: Int { 1 }

    /// Delivers one event to borrowed subscribers (see `forEach` for what it publishes). Outside the lock.
    @inlinable
    func deliver(
        _ event: DeliveryEvent<Output, Failure>,
        to subscribers: BorrowedSubscribers<Output, Failure>,
        serial: UInt64
    ) {
        switch event {
        case .value(let value, let generation):
            forEach(in: subscribers, serial: serial) { subscriber in
                if subscriber.generation < generation { subscriber.receive(value) }
            }
        case .completion(let completion, let generation):
            forEach(in: subscribers, serial: serial) { subscriber in
                if subscriber.generation < generation { subscriber.receive(completion: completion) }
            }
        case .targeted(let subscriber, let values, let completion):
            for value in values { subscriber.receive(value) }
            if let completion { subscriber.receive(completion: completion) }
        }
    }

    /// Delivers a run of values, in order, to the borrowed subscriber (one at most; see
    /// `DeliveryState.popForDelivery`), each to it only if it was attached before the value was sent.
    @inlinable
    func deliver(
        _ run: ContiguousArray<DeliveryEvent<Output, Failure>>,
        to subscribers: BorrowedSubscribers<Output, Failure>
    ) {
        guard let base = subscribers.base, subscribers.count == 1 else { return }
        base[0]._withUnsafeGuaranteedRef { subscriber in
            for event in run {
                guard case .value(let value, let generation) = event else { continue }
                if subscriber.generation < generation { subscriber.receive(value) }
            }
        }
    }

    /// Delivers a value to every borrowed subscriber, borrowed while the queue was empty (so every one of
    /// them was attached before the value was sent).
    @inlinable
    func deliver(_ value: Output, to subscribers: BorrowedSubscribers<Output, Failure>, serial: UInt64) {
        forEach(in: subscribers, serial: serial) { $0.receive(value) }
    }

    /// Visits borrowed subscribers without retaining each one (see `SubscriberList`, rule 3: each is
    /// backed by a strong reference until the drain ends its borrow). With several, it publishes the
    /// position of each before calling it, and the end after the last; an event for one subscriber
    /// publishes nothing (its waiters wait for the event's end, see `InFlightCallback`).
    @inlinable @inline(__always)
    func forEach(
        in subscribers: BorrowedSubscribers<Output, Failure>,
        serial: UInt64,
        _ body: (Subscriber<Output, Failure>) -> Void
    ) {
        guard let base = subscribers.base else { return }
        let count = subscribers.count
        if count == 1 {
            base[0]._withUnsafeGuaranteedRef(body)
            return
        }
        // The positions this event reserved: `serial - count ..< serial`, then `serial` for its end.
        var position = serial &- UInt64(truncatingIfNeeded: count)
        for index in 0..<count {
            inFlightCallback.publish(position: position)
            base[index]._withUnsafeGuaranteedRef(body)
            position &+= 1
        }
        inFlightCallback.publish(position: serial)
    }
}
