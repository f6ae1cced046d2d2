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

/// What a waiting `remove` waits for (see `InFlightCallback`).
@usableFromInline
enum InFlightWait {
    /// The end of event `serial`, which is for the removed subscriber alone.
    case eventEnd(serial: UInt64)
    /// The drain to move past `position`: the removed subscriber's callback in the event in flight.
    case position(UInt64)
}

/// What the caller of a `DeliveryState` transition does once it has released the lock.
@usableFromInline
enum DeliveryAction<Output: Sendable, Failure: Error> {
    /// Nothing: no event is waiting, or another thread is already delivering.
    case none
    /// Deliver this event (serial number `serial`) to these subscribers, then ask `next()` for more.
    case deliver(DeliveryEvent<Output, Failure>, BorrowedSubscribers<Output, Failure>, serial: UInt64)
    /// Deliver these values, in order, to these subscribers (one at most), then ask `next()` for more:
    /// a run of queued values taken in one critical section (see `DeliveryState.popForDelivery`). (No
    /// serial: a waiter for its one subscriber waits for the end of the run, announced by `next()`.)
    case deliverValues(ContiguousArray<DeliveryEvent<Output, Failure>>, BorrowedSubscribers<Output, Failure>)
    /// Ask the executor to run a drain (a drain is scheduled: the relay stays claimed until it runs).
    case schedule
}

/// The state machine behind every relay: subscribers, the queue of undelivered events, and who drains it.
///
/// Serialization comes from a single drainer: whoever enqueues into an idle state becomes the drainer (or,
/// with an executor, schedules one) and delivers events one at a time. A send from another thread or from
/// inside a callback only enqueues, so it never blocks and never reorders. Every transition runs under
/// the owning relay's lock and returns what to do next; the relay performs it after unlocking.
///
/// Fairness: a drain is bounded. A drain scheduled on an executor delivers what was queued when it
/// started plus at most `scheduledExtraBudget` events that arrive meanwhile, and stops sooner once it has
/// run for `scheduledSlice` by the executor's clock; then it schedules the rest as a new job, so other
/// work on that executor (another stream's deliveries on the same serial queue) waits at most about a
/// slice plus one callback. An inline drain (on the sending thread) delivers
/// its own thread's events without limit, but once other threads have queued more than
/// `inlineForeignBudget` events during it, or `inlineSlice` has passed since the first of them, it hands
/// the rest to a scheduled drain and returns — a thread that sent one value is held by other threads'
/// events for about a slice, however slow their callbacks.
@usableFromInline
struct DeliveryState<Output: Sendable, Failure: Error> {
    @usableFromInline var subscribers = SubscriberList<Output, Failure>()
    @usableFromInline var queue = FIFO<DeliveryEvent<Output, Failure>>()
    /// A drain is running or scheduled.
    /// Who drains: 0 nobody (idle), 1 a thread inline, 2 a job that is scheduled but not running yet,
    /// 3 a scheduled job running. One byte, so starting and ending a drain are one store each.
    @usableFromInline var drainMode: UInt8 = 0
    /// A drain is running or scheduled.
    @inlinable var isDraining: Bool { drainMode != 0 }
    /// The running drain was scheduled (on the relay's executor, or as a hand-over).
    @inlinable var isScheduledDrain: Bool { drainMode == 3 }
    /// A drain is running (inline or as a job) on some thread.
    @inlinable var isDrainRunning: Bool { drainMode & 1 == 1 }
    /// The thread running the drain; nil while idle or while a drain is scheduled but not yet running.
    @usableFromInline var drainer = ThreadID(raw: 0)
    /// The serial number of the event being delivered: advanced by 1 as each event starts, and by the
    /// number of recipients of an event that may have several, whose callbacks' positions are the numbers
    /// just below it (see `InFlightCallback`). 64 bits, so it never wraps (2^64 at a nanosecond each take
    /// centuries): a waiter compares serials and positions exactly, at any age of the relay.
    @usableFromInline var serial: UInt64 = 0
    /// The subscribers the event in flight is for (a borrowed view), or the one a targeted event is for.
    @usableFromInline var inFlight = BorrowedSubscribers<Output, Failure>.none
    /// Identity only (no reference: releasing under the lock could run a deinit).
    @usableFromInline var inFlightTarget: ObjectIdentifier?
    /// Events a scheduled drain may still deliver before it hands the rest to a new job.
    @usableFromInline var scheduledBudget = 0
    /// When the running scheduled drain's time slice ends, by its executor's clock.
    @usableFromInline var scheduledSliceEnd = StreamInstant.zero
    /// Events other threads queued while an inline drain ran.
    @usableFromInline var foreignEnqueued = 0
    /// When the running inline drain's time slice ends, by the monotonic clock: set when another thread
    /// queues the drain's first foreign event (meaningful only while `foreignEnqueued > 0`).
    @usableFromInline var inlineSliceEnd = StreamInstant.zero
    /// How many events the last delivery action carried (a run of values counts each).
    @usableFromInline var eventsInFlight = 1
    /// Waiters registered for the end of the event in flight (a single-subscriber event).
    @usableFromInline var eventEndWaiters = 0
    /// A completion has been enqueued: nothing more is accepted.
    @usableFromInline var isTerminated = false
    @usableFromInline var terminalCompletion: StreamCompletion<Failure>?
    /// Incremented at each attach; an event reaches only subscribers attached before it was enqueued.
    @usableFromInline var generation: UInt64 = 0
    /// With `true`, a value still waiting in the queue is replaced by a newer one.
    @usableFromInline let conflatesValues: Bool

    /// How many events other threads may queue during an inline drain before it hands the rest on. (A
    /// hand-over costs a job — a dispatch and a thread wake-up, microseconds — so the budget is large
    /// enough to make that a nanosecond per event, and small enough to bound the wait.)
    @usableFromInline static var inlineForeignBudget: Int { 4_096 }

    /// How long an inline drain may go on delivering once another thread has queued an event during it,
    /// before it hands the rest on: a thread that sent one value is held no longer than this (and the
    /// event, or run of values, in progress) by other threads' events, however slow their callbacks.
    @usableFromInline static var inlineSlice: Duration { .milliseconds(1) }

    /// How many events a scheduled drain may deliver beyond those queued when it started before it hands
    /// the rest to a new job: a producer about as fast as its consumer would otherwise cost a job every
    /// few events.
    @usableFromInline static var scheduledExtraBudget: Int { 4_096 }

    /// How long a scheduled drain runs before it hands the rest to a new job, even within its budget: the
    /// other jobs on a serial executor — another stream's deliveries — wait no longer than this (and the
    /// callback in progress). A new job per millisecond costs a flood nothing measurable.
    @usableFromInline static var scheduledSlice: Duration { .milliseconds(1) }

    @inlinable
    init(conflatesValues: Bool = false) { self.conflatesValues = conflatesValues }

    /// Enqueues a value. Returns false (dropping it) after a completion; with conflation, hands back the
    /// value it replaced in `replaced`, for the caller to release outside the lock.
    @inlinable
    @discardableResult
    mutating func enqueue(_ value: Output, replaced: inout DeliveryEvent<Output, Failure>?) -> Bool {
        guard !isTerminated else { return false }
        noteEnqueue()
        if conflatesValues, case .value(_, let waitingGeneration)? = queue.last, waitingGeneration == generation {
            replaced = queue.replaceLast(with: .value(value, generation: generation))
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
        noteEnqueue()
        isTerminated = true
        terminalCompletion = completion
        queue.append(.completion(completion, generation: generation))
        return true
    }

    /// Counts an event queued by another thread than the one draining inline; the first one starts the
    /// drain's time slice. (A scheduled drain counts nothing: its budget is set when it starts.)
    @inlinable @inline(__always)
    mutating func noteEnqueue() {
        if drainMode == 1, drainer != .current {
            if foreignEnqueued == 0 { startInlineSlice() }
            foreignEnqueued &+= 1
        }
    }

    /// Reads the clock once per drain that other threads contend for (never on an uncontended one).
    @usableFromInline
    mutating func startInlineSlice() { inlineSliceEnd = .monotonicNow + Self.inlineSlice }

    /// Attaches a subscriber, which first receives `initialValues` (in order), then every later event.
    ///
    /// After termination the subscriber receives `initialValues` (a replay) and the completion, and is not
    /// kept.
    @inlinable
    mutating func attach(_ subscriber: Subscriber<Output, Failure>, initialValues: [Output] = []) {
        subscriber.generation = generation
        generation &+= 1
        if let completion = terminalCompletion {
            queue.append(.targeted(subscriber, initialValues, completion))
        } else {
            subscribers.append(subscriber)
            if !initialValues.isEmpty { queue.append(.targeted(subscriber, initialValues, nil)) }
        }
    }

    /// Detaches a subscriber: it is marked cancelled (no callback of it starts once a drain reads the
    /// mark) and leaves the list. Returns its list reference for the caller to release after unlocking.
    @inlinable
    mutating func detach(_ subscriber: Subscriber<Output, Failure>) -> Unmanaged<Subscriber<Output, Failure>>? {
        subscriber.markCancelled()
        subscriber.token = nil
        return subscribers.remove(subscriber)
    }

    /// What a waiting `remove` of `subscriber` waits for (see `InFlightCallback`): the end of the event in
    /// flight when it is for this subscriber alone, or its position in an event for several. Nil when no
    /// drain is running or the event in flight does not include it.
    @inlinable
    func inFlightWait(for subscriber: Subscriber<Output, Failure>) -> InFlightWait? {
        guard isDrainRunning else { return nil }
        if let target = inFlightTarget {
            return target == ObjectIdentifier(subscriber) ? .eventEnd(serial: serial) : nil
        }
        guard let index = inFlight.firstIndex(of: subscriber) else { return nil }
        // One recipient (a single event, or a run of values): wait for the end of the event or the run.
        if inFlight.count == 1 { return .eventEnd(serial: serial) }
        return .position(serial &- UInt64(inFlight.count) &+ UInt64(index))
    }

    /// After any transition that may have enqueued: start draining if the queue is idle and non-empty.
    @inlinable
    mutating func claim(byExecutor: Bool) -> DeliveryAction<Output, Failure> {
        guard !isDraining, !queue.isEmpty else { return .none }
        if byExecutor {
            drainMode = 2
            return .schedule
        }
        drainMode = 1
        drainer = .current
        foreignEnqueued = 0
        return popForDelivery()
    }

    /// Claims an idle relay for an inline delivery that bypasses the queue (the send fast path): the
    /// caller delivers to the returned subscribers, then calls `next()`.
    @inlinable
    mutating func claimForDirectDelivery(
        target: ObjectIdentifier? = nil
    ) -> (
        BorrowedSubscribers<Output, Failure>, serial: UInt64
    ) {
        drainMode = 1
        drainer = .current
        // (Compared before storing: on the send fast path both are almost always zero already, and a load
        // is cheaper than a store here.)
        if foreignEnqueued != 0 { foreignEnqueued = 0 }
        serial &+= 1
        if let target {
            inFlightTarget = target
            inFlight = .none
        } else {
            if inFlightTarget != nil { inFlightTarget = nil }
            inFlight = subscribers.borrow()
            serial &+= UInt64(truncatingIfNeeded: inFlight.count)
        }
        return (inFlight, serial)
    }

    /// A scheduled drain starts running on the current thread, at `now` by its executor's clock: it may
    /// deliver what is queued now, and more within its budget and time slice. `now` is nil for an
    /// executor that runs jobs inline: such a drain is not bounded (a new job would run nested in it).
    @inlinable
    mutating func beginScheduledDrain(now: StreamInstant?) -> DeliveryAction<Output, Failure> {
        drainMode = 3
        drainer = .current
        if let now {
            scheduledBudget = queue.count + Self.scheduledExtraBudget
            scheduledSliceEnd = now + Self.scheduledSlice
        } else {
            scheduledBudget = .max
        }
        return popForDelivery()
    }

    /// The drainer finished delivering one event: the next one, a hand-over to a scheduled drain, or
    /// idle. Also returns what the subscriber list retired during the event, to dispose of after unlocking.
    /// `now` is the executor's time, read by a scheduled drain; for an inline one, the monotonic time,
    /// read only once other threads have queued events during it (nil before: then it is read here).
    @inlinable
    mutating func next(
        now: StreamInstant?,
        leftovers: inout SubscriberListLeftovers<Output, Failure>?,
        endedEventWithWaiters: inout UInt64?
    ) -> DeliveryAction<Output, Failure> {
        leftovers = subscribers.endBorrow()
        if eventEndWaiters != 0 {
            eventEndWaiters = 0
            endedEventWithWaiters = serial
        }
        inFlight = .none
        inFlightTarget = nil
        if queue.isEmpty {
            drainMode = 0
            return .none
        }
        if isScheduledDrain {
            scheduledBudget -= eventsInFlight
            if scheduledBudget <= 0 || now.map({ $0 >= scheduledSliceEnd }) == true {
                drainMode = 2
                return .schedule
            }
        } else if foreignEnqueued > 0 {
            // The hand-off is being considered only now, once another thread queued an event during this
            // drain: so an uncontended drain never reads the clock, and a contended one reads it once per
            // event or run of values (outside the lock, but for the first look), as a scheduled drain does.
            // Counting events alone would hold the sender for 4,096 foreign callbacks however long each
            // takes.
            let now = now ?? .monotonicNow
            if foreignEnqueued > Self.inlineForeignBudget || now >= inlineSliceEnd {
                drainMode = 2
                foreignEnqueued = 0
                return .schedule
            }
        }
        return popForDelivery()
    }

    /// The most values a run taken in one critical section may hold.
    @usableFromInline static var runLimit: Int { 64 }

    @inlinable
    mutating func popForDelivery() -> DeliveryAction<Output, Failure> {
        guard let event = queue.popFirst() else {
            drainMode = 0
            return .none
        }
        serial &+= 1
        eventsInFlight = 1
        if case .value = event, subscribers.count <= 1, case .value? = queue.first {
            // With one subscriber at most, values waiting back to back are taken as one run: one critical
            // section for many values instead of one each, which is what a consumer racing its producer for
            // the lock pays for. Waiting stays precise: a waiter for the one subscriber waits for the end of
            // the run, during which only its own callbacks run (each checks its cancellation first).
            // A scheduled drain's run stays within its budget.
            let limit = isScheduledDrain ? Swift.max(1, Swift.min(Self.runLimit, scheduledBudget)) : Self.runLimit
            var run = ContiguousArray<DeliveryEvent<Output, Failure>>()
            run.reserveCapacity(Swift.min(queue.count + 1, limit))
            run.append(event)
            while run.count < limit, case .value? = queue.first, let next = queue.popFirst() {
                run.append(next)
            }
            serial &+= UInt64(truncatingIfNeeded: run.count - 1)
            eventsInFlight = run.count
            inFlight = subscribers.borrow()
            inFlightTarget = nil
            return .deliverValues(run, inFlight)
        }
        switch event {
        case .value:
            inFlight = subscribers.borrow()
            serial &+= UInt64(truncatingIfNeeded: inFlight.count)
            inFlightTarget = nil
            return .deliver(event, inFlight, serial: serial)
        case .completion:
            // Every subscriber is done: the list empties, its buffer stays readable (borrowed) for this
            // event, and the subscribers' references are released when the borrow ends.
            inFlight = subscribers.borrow()
            serial &+= UInt64(truncatingIfNeeded: inFlight.count)
            inFlightTarget = nil
            _ = subscribers.removeAll()
            return .deliver(event, inFlight, serial: serial)
        case .targeted(let subscriber, _, _):
            inFlight = .none
            inFlightTarget = ObjectIdentifier(subscriber)
            return .deliver(event, .none, serial: serial)
        }
    }
}
