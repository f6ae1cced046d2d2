/// The debounce logic, without threads or time: the pending value, its timer, and what to emit when the
/// timer fires or the upstream completes.
struct DebounceStateMachine<Value, Failure: Error> {
    typealias Action = OperatorAction<Value, Failure, TimedEffect<Value>>

    /// Exhaustive: an upstream event after the upstream's completion is a broken contract and traps with a
    /// message instead of being dropped silently.
    private enum Phase {
        /// Passing events; `pending` holds the value waiting for the timer.
        case active
        /// The upstream completed: it sends nothing more.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    private var pending: Value?
    private var phase = Phase.active
    var timer = OperatorTimer()
    private let interval: Duration

    init(interval: Duration) { self.interval = interval }

    /// A value arrived: it replaces the pending one (released outside the lock) and restarts the timer.
    mutating func valueReceived(_ value: Value) -> Action {
        switch phase {
        case .active: break
        case .cancelled: return .none
        case .completed: preconditionFailure("debounce: the upstream sent a value after its completion")
        }
        let replaced = pending
        pending = value
        var effect = TimedEffect<Value>(discarded: replaced)
        if let request = timer.restart() { effect.startTimer = (request, interval) }
        return .perform(effect)
    }

    /// The timer fired (`epoch` tells which): the pending value goes out.
    mutating func timerFired(epoch: UInt64) -> Action {
        // Ending stops the timer, so a current timer means the phase is `.active`.
        guard timer.fire(epoch: epoch), let value = pending.take() else { return .none }
        return .emit(value)
    }

    /// The upstream completed: the pending value, if any, then the completion; the timer stops.
    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        switch phase {
        case .active: break
        case .cancelled: return .none
        case .completed: preconditionFailure("debounce: the upstream completed twice")
        }
        phase = .completed
        return OperatorAction(value: pending.take(), completion: completion, effect: .cancel(timer.stop()))
    }

    /// The subscriber invalidated: the pending value is dropped, the timer stops, the upstream ends.
    mutating func cancelled() -> TimedEffect<Value> {
        phase = .cancelled
        return TimedEffect(cancelTimer: timer.stop(), discarded: pending.take(), endsUpstream: true)
    }
}

extension DebounceStateMachine: TimedOperatorStateMachine {
    mutating func valueReceived(_ value: Value, at _: StreamInstant) -> Action { valueReceived(value) }
    mutating func completed(_ completion: StreamCompletion<Failure>, at _: StreamInstant) -> Action {
        completed(completion)
    }
    mutating func timerFired(epoch: UInt64, at _: StreamInstant) -> Action { timerFired(epoch: epoch) }
}
