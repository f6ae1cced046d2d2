/// The timeout logic, without threads: a deadline that each value pushes back, its timer, and the
/// completion to end with when it passes.
///
/// The timer is not rescheduled per value: when it fires before the deadline (a value came meanwhile) it
/// is rescheduled for the remaining time, so a fast stream costs one clock read per value.
struct TimeoutStateMachine<Value, Failure: Error>: TimedOperatorStateMachine {
    static var usesClock: Bool { true }

    typealias Action = OperatorAction<Value, Failure, TimedEffect<Value>>

    private var deadline: StreamInstant
    private var isActive = true
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
        guard isActive else { return .none }
        deadline = now + interval
        return .emit(value)
    }

    /// The upstream completed: it passes; the timer stops.
    mutating func completed(_ completion: StreamCompletion<Failure>, at _: StreamInstant = .zero) -> Action {
        guard isActive else { return .none }
        isActive = false
        return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
    }

    /// The timer fired at `now` (`epoch` tells which): the stream ends if the deadline has passed, else
    /// the timer waits for the remaining time.
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action {
        guard timer.fire(epoch: epoch), isActive else { return .none }
        guard now >= deadline else { return OperatorAction(effect: .start(timer.restart(), after: deadline - now)) }
        isActive = false
        return OperatorAction(
            completion: timeoutCompletion(), effect: TimedEffect(cancelTimer: timer.stop(), endsUpstream: true))
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> TimedEffect<Value> {
        isActive = false
        return TimedEffect(cancelTimer: timer.stop(), endsUpstream: true)
    }
}
