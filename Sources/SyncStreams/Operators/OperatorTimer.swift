/// The one timer of a time-based operator (`throttle`, `debounce`, `timeout`), kept in its relay's
/// `Extra` state.
///
/// Scheduling and cancelling call into the executor, so they happen outside the relay's lock: under the
/// lock the operator asks for a timer (`restart()`, which hands back the previous handle to cancel), then
/// schedules it after unlocking and stores the handle (`store`). Each timer carries an epoch; a timer job
/// does something only if `fire(epoch:)` says it is still the current, armed timer. So a timer that fires
/// before its handle is stored, a handle stored after the operator stopped, or a job that starts while
/// it is being cancelled on another thread all do nothing.
struct OperatorTimer {
    /// What to schedule after unlocking: the new timer's epoch and the previous timer to cancel.
    struct Request {
        let epoch: UInt64
        let previous: ScheduledWork?
    }

    private var epoch: UInt64 = 0
    private var handle: ScheduledWork?
    private var isArmed = false
    private var isStopped = false

    /// Arms a new timer, replacing the current one; nil once stopped.
    mutating func restart() -> Request? {
        guard !isStopped else { return nil }
        epoch &+= 1
        isArmed = true
        let previous = handle
        handle = nil
        return Request(epoch: epoch, previous: previous)
    }

    /// Keeps the handle of the timer scheduled for `epoch`, or returns it to be cancelled (outside the
    /// lock) when that timer is no longer current.
    mutating func store(_ scheduled: ScheduledWork, epoch: UInt64) -> ScheduledWork? {
        guard !isStopped, isArmed, epoch == self.epoch else { return scheduled }
        handle = scheduled
        return nil
    }

    /// A timer job runs: whether it is the current armed timer (which it disarms).
    mutating func fire(epoch: UInt64) -> Bool {
        guard !isStopped, isArmed, epoch == self.epoch else { return false }
        isArmed = false
        handle = nil
        return true
    }

    /// Disarms for good; returns the handle to cancel outside the lock.
    mutating func stop() -> ScheduledWork? {
        isStopped = true
        isArmed = false
        let current = handle
        handle = nil
        return current
    }
}

/// An operator state that holds an `OperatorTimer`.
protocol TimedOperatorState: SendableMetatype {
    var timer: OperatorTimer { get set }
    /// The subscriber invalidated: the state machine stops producing actions.
    mutating func cancel()
}

/// The skeleton every time-based operator (`throttle`, `debounce`, `timeout`) shares: one subscription's
/// relay (whose `Extra` holds the operator's state machine and timer), the upstream link, and the
/// subscriber. Subclasses react to upstream events and to their timer; invalidation is common to all:
/// detach the subscriber (waiting, for a user's `invalidate()`), stop the state machine and the timer
/// (no timer fires afterwards), and end the upstream without waiting.
class TimedOperatorCore<Output: Sendable, Failure: Error, State: TimedOperatorState>: Cancellation,
    @unchecked Sendable
{
    // @unchecked Sendable: mutable state is the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before the core is shared; the rest is
    // immutable and Sendable.
    let relay: Relay<Output, Failure, State>
    let interval: Duration
    let executor: any StreamExecutor
    let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    /// - Parameter deliversOnExecutor: Whether the relay delivers on `executor` (throttle, debounce) or
    ///   inline on the sending thread (timeout).
    init(
        state: State,
        interval: Duration,
        executor: any StreamExecutor,
        deliversOnExecutor: Bool,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.interval = interval
        self.executor = executor
        relay = Relay(extra: state, executor: deliversOnExecutor ? executor : nil)
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    /// Subscribes to the upstream, after `willConnect()`.
    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        willConnect()
        let token = upstream.subscribe(
            onValue: { value in self.receive(value) },
            onCompletion: { completion in self.receive(completion: completion) }
        )
        link.attach(token)
    }

    /// Runs before the upstream is subscribed to. Does nothing by default.
    func willConnect() {}

    /// An upstream value. Subclasses override.
    func receive(_ value: Output) {}

    /// The upstream completion. Subclasses override.
    func receive(completion: StreamCompletion<Failure>) {}

    /// The current timer fired (`epoch` tells which; see `OperatorTimer.fire(epoch:)`). Subclasses
    /// override.
    func timerFired(epoch: UInt64) {}

    /// Schedules the requested timer (if any) after `delay`; it calls `timerFired(epoch:)`.
    func startTimer(_ request: OperatorTimer.Request?, after delay: Duration) {
        relay.startTimer(request, after: delay, on: executor) { epoch in self.timerFired(epoch: epoch) }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        relay.withExtra { $0.cancel() }
        relay.stopTimer()
        link.end()
    }
}

extension Relay where Extra: TimedOperatorState {
    /// Outside the lock: cancels the previous timer, schedules the requested one on `executor` after
    /// `delay` (its job calls `fire` with the timer's epoch), and stores its handle.
    func startTimer(
        _ request: OperatorTimer.Request?,
        after delay: Duration,
        on executor: any StreamExecutor,
        fire: @escaping @Sendable (UInt64) -> Void
    ) {
        guard let request else { return }
        request.previous?.cancel()
        let epoch = request.epoch
        let scheduled = executor.schedule(after: delay) { fire(epoch) }
        let stale = withExtra { $0.timer.store(scheduled, epoch: epoch) }
        stale?.cancel()
    }

    /// Stops the timer for good and cancels it (outside the lock).
    func stopTimer() {
        withExtra { $0.timer.stop() }?.cancel()
    }
}
