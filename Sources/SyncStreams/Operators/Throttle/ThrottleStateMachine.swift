/// The throttle logic, without threads or time: what to emit when a value arrives, a window ends, or the
/// upstream completes, and what to do with the window's timer.
struct ThrottleStateMachine<Value, Failure: Error> {
    typealias Action = OperatorAction<Value, Failure, TimedEffect<Value>>

    /// Exhaustive: an event no state can receive (an upstream event after the upstream's completion, a
    /// current timer when no window is open) is a broken contract and traps with a message instead of
    /// being dropped silently.
    private enum State {
        case quiet
        case window(held: Value?)
        /// The upstream completed while a value was held: both go out when the window ends (so no two
        /// values leave within one interval).
        case finishing(held: Value, completion: StreamCompletion<Failure>)
        /// The completion went out (the upstream completed): the upstream sends nothing more.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    private var state = State.quiet
    var timer = OperatorTimer()
    private let keepsLatest: Bool
    private let interval: Duration

    init(interval: Duration, latest: Bool) {
        self.interval = interval
        keepsLatest = latest
    }

    /// A value arrived: after a quiet period it goes out at once and opens a window; during a window it
    /// is held (the newest, or the first, as configured).
    mutating func valueReceived(_ value: Value) -> Action {
        switch state {
        case .quiet:
            state = .window(held: nil)
            return OperatorAction(value: value, effect: openWindow())
        case .window(let held):
            guard keepsLatest || held == nil else { return OperatorAction(effect: .discard(value)) }
            state = .window(held: value)
            return OperatorAction(effect: .discard(held))
        case .cancelled:
            return .none
        case .finishing, .completed:
            preconditionFailure("throttle: the upstream sent a value after its completion")
        }
    }

    /// The window's timer fired (`epoch` tells which): the held value goes out and opens a new window,
    /// or the stream is quiet again.
    mutating func timerFired(epoch: UInt64) -> Action {
        guard timer.fire(epoch: epoch) else { return .none }
        switch state {
        case .window(let held?):
            state = .window(held: nil)
            return OperatorAction(value: held, effect: openWindow())
        case .window(nil):
            state = .quiet
            return .none
        case .finishing(let held, let completion):
            state = .completed
            return OperatorAction(value: held, completion: completion)
        case .quiet, .completed, .cancelled:
            // Only an open window arms the timer; its firing disarms it, and ending stops it.
            preconditionFailure("throttle: a current timer fired with no window open")
        }
    }

    /// The upstream completed: the held value, if any, then the completion; the timer stops.
    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        switch state {
        case .window(let held?):
            // The held value goes out when the window ends, then the completion; the timer keeps running.
            state = .finishing(held: held, completion: completion)
            return .none
        case .quiet, .window(nil):
            state = .completed
            return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
        case .cancelled:
            return .none
        case .finishing, .completed:
            preconditionFailure("throttle: the upstream completed twice")
        }
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> TimedEffect<Value> {
        let held: Value?
        switch state {
        case .window(let value): held = value
        case .finishing(let value, _): held = value
        case .quiet, .completed, .cancelled: held = nil
        }
        state = .cancelled
        return TimedEffect(cancelTimer: timer.stop(), discarded: held, endsUpstream: true)
    }

    private mutating func openWindow() -> TimedEffect<Value>? { .start(timer.restart(), after: interval) }
}

extension ThrottleStateMachine: TimedOperatorStateMachine {
    mutating func valueReceived(_ value: Value, at _: StreamInstant) -> Action { valueReceived(value) }
    mutating func completed(_ completion: StreamCompletion<Failure>, at _: StreamInstant) -> Action {
        completed(completion)
    }
    mutating func timerFired(epoch: UInt64, at _: StreamInstant) -> Action { timerFired(epoch: epoch) }
}
