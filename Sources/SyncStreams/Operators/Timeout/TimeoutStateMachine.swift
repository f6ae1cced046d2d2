/// The timeout logic, without threads: a deadline that each value pushes back, its timer, and the
/// completion to end with when it passes.
///
/// The timer is not rescheduled per value: when it fires before the deadline (a value came meanwhile) it
/// is rescheduled for the remaining time, so a fast stream costs one clock read per value.
struct TimeoutStateMachine<Value, Failure: Error>: TimedOperatorStateMachine {
    static var usesClock: Bool { true }

    typealias Action = OperatorAction<Value, Failure, TimedEffect<Value>>

    /// Where the stream is: passing events; timed out, its completion being made outside the lock (by
    /// user code, so not under it); ended.
    enum Phase { case active, timingOut, ended }

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
        guard phase == .active else { return .none }
        deadline = now + interval
        return .emit(value)
    }

    /// The upstream completed: it passes; the timer stops.
    mutating func completed(_ completion: StreamCompletion<Failure>, at _: StreamInstant = .zero) -> Action {
        guard phase == .active else { return .none }
        phase = .ended
        return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
    }

    /// The timer fired at `now` (`epoch` tells which): the stream times out if the deadline has passed
    /// (nothing passes any more; the completion is made outside the lock and comes back through
    /// `completionComputed`), else the timer waits for the remaining time.
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action {
        guard timer.fire(epoch: epoch), phase == .active else { return .none }
        guard now >= deadline else { return OperatorAction(effect: .start(timer.restart(), after: deadline - now)) }
        phase = .timingOut
        return OperatorAction(
            effect: TimedEffect(cancelTimer: timer.stop(), endsUpstream: true, computesCompletion: true))
    }

    /// What the stream ends with when it times out (the user's `customError`, if given).
    var completionOutsideLock: (@Sendable () -> StreamCompletion<Failure>)? { timeoutCompletion }

    /// The timeout's completion, made outside the lock: emitted unless the subscriber left meanwhile.
    mutating func completionComputed(_ completion: StreamCompletion<Failure>) -> Action {
        guard phase == .timingOut else { return .none }
        phase = .ended
        return OperatorAction(completion: completion)
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> TimedEffect<Value> {
        phase = .ended
        return TimedEffect(cancelTimer: timer.stop(), endsUpstream: true)
    }
}
