/// The delay logic, without threads: the events waiting for their time, in order, and the one timer
/// that runs for the earliest of them.
///
/// Each event (value or completion) is due `interval` after it arrived. The timer runs for the head of
/// the queue; when it fires, the head is emitted and the timer restarts for the next one (at once if it
/// is due already), so events leave one per timer job, in arrival order, each at its due time.
struct DelayStateMachine<Value, Failure: Error>: TimedOperatorStateMachine {
    static var usesClock: Bool { true }

    enum Event {
        case value(Value)
        case completion(StreamCompletion<Failure>)
    }

    /// The events waiting for their time, oldest first.
    typealias Waiting = FIFO<(due: StreamInstant, event: Event)>
    typealias Action = OperatorAction<Value, Failure, TimedEffect<Waiting>>

    /// Exhaustive: an upstream event after the upstream's completion, or a current timer with nothing
    /// waiting, is a broken contract and traps with a message instead of being dropped silently.
    private enum Phase {
        /// The upstream is live; its events wait in `waiting`.
        case active
        /// The upstream completed: its completion waits behind the values before it.
        case completionWaiting
        /// The completion went out.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    private var waiting = Waiting()
    private var phase = Phase.active
    var timer = OperatorTimer()
    private let interval: Duration

    init(interval: Duration) { self.interval = interval }

    /// A value arrived at `now`: it waits until `now + interval`.
    mutating func valueReceived(_ value: Value, at now: StreamInstant) -> Action {
        switch phase {
        case .active: return arrived(.value(value), at: now)
        case .cancelled: return .none
        case .completionWaiting, .completed:
            preconditionFailure("delay: the upstream sent a value after its completion")
        }
    }

    /// The upstream completed at `now`: the completion follows the values before it, `interval` later.
    mutating func completed(_ completion: StreamCompletion<Failure>, at now: StreamInstant) -> Action {
        switch phase {
        case .active:
            phase = .completionWaiting
            return arrived(.completion(completion), at: now)
        case .cancelled:
            return .none
        case .completionWaiting, .completed:
            preconditionFailure("delay: the upstream completed twice")
        }
    }

    /// The timer fired at `now` (`epoch` tells which): the head goes out, and the timer restarts for the
    /// next one.
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action {
        guard timer.fire(epoch: epoch) else { return .none }
        // The timer is armed only for a waiting head, and ending stops it.
        guard let head = waiting.popFirst() else { preconditionFailure("delay: the timer fired with nothing waiting") }
        switch head.event {
        case .value(let value):
            return OperatorAction(value: value, effect: startTimerForHead(at: now))
        case .completion(let completion):
            phase = .completed
            return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
        }
    }

    /// The subscriber invalidated: the waiting events are dropped, the timer stops, the upstream ends.
    mutating func cancelled() -> TimedEffect<Waiting> {
        phase = .cancelled
        let dropped = waiting
        waiting = Waiting()
        return TimedEffect(cancelTimer: timer.stop(), discarded: dropped, endsUpstream: true)
    }

    private mutating func arrived(_ event: Event, at now: StreamInstant) -> Action {
        let wasIdle = waiting.isEmpty
        waiting.append((now + interval, event))
        return wasIdle ? OperatorAction(effect: .start(timer.restart(), after: interval)) : .none
    }

    private mutating func startTimerForHead(at now: StreamInstant) -> TimedEffect<Waiting>? {
        guard let next = waiting.first else { return nil }
        return .start(timer.restart(), after: max(next.due - now, .zero))
    }
}
