/// What a time-based operator's state machine (`throttle`, `debounce`, `timeout`, `delay`) asks its
/// storage to do outside the lock; any combination of the parts.
struct TimedEffect<Discarded> {
    /// Cancel the request's previous timer, if any, and schedule the timer for `request.epoch` after the
    /// delay (its job reports back with that epoch).
    var startTimer: (request: OperatorTimer.Request, delay: Duration)?
    /// A scheduled timer to cancel.
    var cancelTimer: ScheduledWork?
    /// What the machine no longer holds (a value replaced, or events dropped): released by the storage,
    /// outside the lock, because releasing may run user code.
    var discarded: Discarded?
    /// End the upstream subscription: the operator ended on its own, or the subscriber left.
    var endsUpstream = false

    init(
        startTimer: (request: OperatorTimer.Request, delay: Duration)? = nil,
        cancelTimer: ScheduledWork? = nil,
        discarded: Discarded? = nil,
        endsUpstream: Bool = false
    ) {
        self.startTimer = startTimer
        self.cancelTimer = cancelTimer
        self.discarded = discarded
        self.endsUpstream = endsUpstream
    }

    /// Start the requested timer (nothing when the timer is stopped and `request` is nil).
    static func start(_ request: OperatorTimer.Request?, after delay: Duration) -> TimedEffect? {
        request.map { TimedEffect(startTimer: ($0, delay)) }
    }

    /// Cancel a timer, if any.
    static func cancel(_ scheduled: ScheduledWork?) -> TimedEffect? {
        scheduled.map { TimedEffect(cancelTimer: $0) }
    }

    /// Release a value outside the lock.
    static func discard(_ value: Discarded?) -> TimedEffect? {
        value.map { TimedEffect(discarded: $0) }
    }
}

/// A time-based operator's state machine: it owns its `OperatorTimer`, whose handles the storage stores
/// back after scheduling.
protocol TimedStateMachine {
    var timer: OperatorTimer { get set }
}

extension Relay where Extra: TimedStateMachine {
    /// Performs a timed operator's effect, outside the lock: ends the upstream, cancels a timer, schedules
    /// the new one on `executor` (its job calls `fire` with the timer's epoch) and stores its handle.
    func perform<Discarded>(
        _ effect: TimedEffect<Discarded>?,
        executor: any StreamExecutor,
        link: UpstreamLink,
        fire: @escaping @Sendable (UInt64) -> Void
    ) {
        guard let effect else { return }
        if effect.endsUpstream { link.end() }
        effect.cancelTimer?.cancel()
        if let (request, delay) = effect.startTimer {
            request.previous?.cancel()
            let epoch = request.epoch
            let scheduled = executor.schedule(after: delay) { fire(epoch) }
            let stale = withExtra { $0.timer.store(scheduled, epoch: epoch) }
            stale?.cancel()
        }
        // `effect.discarded` is released with `effect`, here.
    }
}
