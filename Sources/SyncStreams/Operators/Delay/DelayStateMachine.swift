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

    private var waiting = Waiting()
    private var hasCompletion = false
    private var isTerminated = false
    var timer = OperatorTimer()
    private let interval: Duration

    init(interval: Duration) { self.interval = interval }

    /// A value arrived at `now`: it waits until `now + interval`.
    mutating func valueReceived(_ value: Value, at now: StreamInstant) -> Action {
        guard !isTerminated, !hasCompletion else { return .none }
        return arrived(.value(value), at: now)
    }

    /// The upstream completed at `now`: the completion follows the values before it, `interval` later.
    mutating func completed(_ completion: StreamCompletion<Failure>, at now: StreamInstant) -> Action {
        guard !isTerminated, !hasCompletion else { return .none }
        hasCompletion = true
        return arrived(.completion(completion), at: now)
    }

    /// The timer fired at `now` (`epoch` tells which): the head goes out, and the timer restarts for the
    /// next one.
    mutating func timerFired(epoch: UInt64, at now: StreamInstant) -> Action {
        guard timer.fire(epoch: epoch), !isTerminated, let head = waiting.popFirst() else { return .none }
        switch head.event {
        case .value(let value):
            return OperatorAction(value: value, effect: startTimerForHead(at: now))
        case .completion(let completion):
            isTerminated = true
            return OperatorAction(completion: completion, effect: .cancel(timer.stop()))
        }
    }

    /// The subscriber invalidated: the waiting events are dropped, the timer stops, the upstream ends.
    mutating func cancelled() -> TimedEffect<Waiting> {
        isTerminated = true
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
