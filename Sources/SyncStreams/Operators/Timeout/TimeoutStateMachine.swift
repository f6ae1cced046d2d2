/// The timeout logic, without threads: a deadline that each value pushes back, its timer, and the
/// completion to end with when it passes.
///
/// The timer is not rescheduled per value: when it fires before the deadline (a value came meanwhile) it
/// is rescheduled for the remaining time, so a fast stream costs one clock read per value.
struct TimeoutStateMachine<Value, Failure: Error>: TimedOperatorStateMachine {
    static var usesClock: Bool { true }

    typealias Action = OperatorAction<Value, Failure, TimedEffect<Value>>

    /// Where the stream is. Exhaustive: an event no phase can receive (an upstream event after the
    /// upstream's completion, a second timeout completion, a current timer after the timer stopped) is a
    /// broken contract and traps with a message instead of being dropped silently.
    enum Phase {
        /// Passing events; the timer runs.
        case active
        /// Timed out: its completion is being made outside the lock (by user code, so not under it); the
        /// upstream is being ended, so its events may still arrive and are dropped.
        case timingOut
        /// The timeout's completion went out; upstream events already on their way are dropped.
        case timedOut
        /// The upstream completed: it sends nothing more.
        case upstreamCompleted
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    private var deadline: StreamInstant
    private(set) var phase = Phase.active
    var timer = OperatorTimer()
    private let interval: Duration
    private let timeoutCompletion: @Sendable () -> StreamCompletion<Failure>

    /// - Parameter timeoutCompletion: What the stream ends with when the deadline passes.
    init(
        start: StreamInstant, interval: Duration, timeoutCompletion: @escaping @Sendable () -> StreamCompletion<Failure>
    ) {
        self.interval = interval
        self.timeoutCompletion = timeoutCompletion
        deadline = start + interval
    }

    /// The subscription starts: the clock starts.
    mutating func started() -> TimedEffect<Value>? { .start(timer.restart(), after: interval) }

    /// A value arrived at `now`: it passes and pushes the deadline back.
    mutating func valueReceived(_ value: Value, at now: StreamInstant) -> Action {
        switch phase {
        case .active:
            deadline = now + interval
            return .emit(value)
        case .timingOut, .timedOut, .cancelled:
            return .none
        case .upstreamCompleted:
            preconditionFailure("timeout: the upstream sent a value after its completion")
        }
    }

    /// The upstream completed: it passes; the timer stops.
    mutating func completed(_ completion: StreamCompletion<Failure>, at _: StreamInstant = .zero) -> Action {
        switch phase {
        case .active:
            phase = .upstreamCompleted
            return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
        case .timingOut, .timedOut, .cancelled:
            return .none
        case .upstreamCompleted:
            preconditionFailure("timeout: the upstream completed twice")
        }
    }

    /// The timer fired at `now` (`epoch` tells which): the stream times out if the deadline has passed
    /// (nothing passes any more; the completion is made outside the lock and comes back through
    /// `completionComputed`), else the timer waits for the remaining time. A timer that is no longer
    /// current (stopped or replaced) does nothing.
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action {
        guard timer.fire(epoch: epoch) else { return .none }
        guard case .active = phase else {
            // Every way out of `.active` stops the timer, so no timer is current any more.
            preconditionFailure("timeout: the timer fired after it was stopped (phase \(phase))")
        }
        guard now >= deadline else { return OperatorAction(effect: .start(timer.restart(), after: deadline - now)) }
        phase = .timingOut
        return OperatorAction(
            effect: TimedEffect(cancelTimer: timer.stop(), endsUpstream: true, computesCompletion: true))
    }

    /// What the stream ends with when it times out (the user's `customError`, if given).
    var completionOutsideLock: (@Sendable () -> StreamCompletion<Failure>)? { timeoutCompletion }

    /// The timeout's completion, made outside the lock: emitted unless the subscriber left meanwhile.
    mutating func completionComputed(_ completion: StreamCompletion<Failure>) -> Action {
        switch phase {
        case .timingOut:
            phase = .timedOut
            return OperatorAction(completion: completion)
        case .cancelled:
            return .none
        case .active, .upstreamCompleted, .timedOut:
            preconditionFailure("timeout: a timeout completion without a timeout pending (phase \(phase))")
        }
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> TimedEffect<Value> {
        phase = .cancelled
        return TimedEffect(cancelTimer: timer.stop(), endsUpstream: true)
    }
}
