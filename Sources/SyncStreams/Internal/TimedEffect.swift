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
    /// Compute the machine's completion outside the lock (`completionOutsideLock`: user code, `timeout`'s
    /// `customError`) and hand it back (`completionComputed`).
    var computesCompletion = false

    init(
        startTimer: (request: OperatorTimer.Request, delay: Duration)? = nil,
        cancelTimer: ScheduledWork? = nil,
        discarded: Discarded? = nil,
        endsUpstream: Bool = false,
        computesCompletion: Bool = false
    ) {
        self.startTimer = startTimer
        self.cancelTimer = cancelTimer
        self.discarded = discarded
        self.endsUpstream = endsUpstream
        self.computesCompletion = computesCompletion
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
