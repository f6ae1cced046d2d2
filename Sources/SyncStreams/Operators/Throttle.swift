extension SyncStream {
    /// Emits at most one value per `interval`, delivered on `executor`, without ever dropping the last one.
    ///
    /// - The first value after a quiet period goes out at once (scheduled on the executor with `execute`)
    ///   and opens a window of `interval`.
    /// - Values received during a window are held: at the window's end the held value is delivered —
    ///   with `latest: true` the newest one, with `latest: false` the first one received in that window —
    ///   and that emission opens a new window. A window that ends with nothing held makes the stream quiet
    ///   again, so the next value goes out at once.
    /// - On completion (finished or failure) a held value is delivered first, then the completion, both
    ///   at once (the final 100 % is never dropped).
    /// - Every event is delivered on `executor`, serialized and in order.
    /// - `invalidate()` cancels the window's timer (it never fires afterwards, and releases what it
    ///   captured) and ends the upstream subscription.
    ///
    /// ```
    /// interval: 3 ticks        (the group (f|) happens at one time)
    /// upstream:                abc-------d-e-f|
    /// throttle(latest: true):  a--c------d--e-(f|)
    /// throttle(latest: false): a--b------d--e-(f|)
    /// ```
    public func throttle<Executor: StreamExecutor>(
        for interval: Duration,
        on executor: Executor,
        latest: Bool
    ) -> Streams.Throttle<Self, Executor> {
        Streams.Throttle(upstream: self, interval: interval, executor: executor, latest: latest)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.throttle(for:on:latest:)`.
    public struct Throttle<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose values are throttled.
        public let upstream: Upstream
        /// The length of a window: at most one value per interval.
        public let interval: Duration
        /// Where values are delivered and windows are timed.
        public let executor: Executor
        /// At a window's end, deliver the newest held value (`true`) or the first (`false`).
        public let latest: Bool

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, interval: Duration, executor: Executor, latest: Bool) {
            self.upstream = upstream
            self.interval = interval
            self.executor = executor
            self.latest = latest
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = ThrottleCore<Output, Failure>(
                interval: interval,
                executor: executor,
                latest: latest,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}

/// The throttle logic, without threads or time: what to emit when a value arrives, a window ends, or the
/// upstream completes. Its owner performs the returned action.
struct ThrottleStateMachine<Value> {
    enum Action {
        case none
        /// Deliver the value and open a window (start the timer).
        case emitAndOpenWindow(Value)
        /// Deliver the held value, if any, then the completion; stop the timer.
        case complete(flushing: Value?)
    }

    private enum State {
        case quiet
        case window(held: Value?)
        case terminated
    }

    private var state = State.quiet
    private let keepsLatest: Bool

    init(latest: Bool) { keepsLatest = latest }

    mutating func valueReceived(_ value: Value) -> Action {
        switch state {
        case .quiet:
            state = .window(held: nil)
            return .emitAndOpenWindow(value)
        case .window(let held):
            if keepsLatest || held == nil { state = .window(held: value) }
            return .none
        case .terminated:
            return .none
        }
    }

    mutating func windowEnded() -> Action {
        switch state {
        case .window(let held?):
            state = .window(held: nil)
            return .emitAndOpenWindow(held)
        case .window(nil):
            state = .quiet
            return .none
        case .quiet, .terminated:
            return .none
        }
    }

    mutating func completed() -> Action {
        switch state {
        case .quiet:
            state = .terminated
            return .complete(flushing: nil)
        case .window(let held):
            state = .terminated
            return .complete(flushing: held)
        case .terminated:
            return .none
        }
    }

    mutating func cancelled() { state = .terminated }
}

/// One throttle subscription: a relay delivering on the executor, the state machine in its `Extra`.
final class ThrottleCore<Output: Sendable, Failure: Error>: TimedOperatorCore<
    Output, Failure, ThrottleCore<Output, Failure>.State
>, @unchecked Sendable
{
    // @unchecked Sendable: see `TimedOperatorCore`; this subclass adds no stored state.
    struct State: TimedOperatorState {
        var machine: ThrottleStateMachine<Output>
        var timer = OperatorTimer()
        mutating func cancel() { machine.cancelled() }
    }

    init(
        interval: Duration,
        executor: any StreamExecutor,
        latest: Bool,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        super.init(
            state: State(machine: ThrottleStateMachine(latest: latest)),
            interval: interval,
            executor: executor,
            deliversOnExecutor: true,
            onValue: onValue,
            onCompletion: onCompletion
        )
    }

    override func receive(_ value: Output) {
        let request = relay.update { state, delivery -> OperatorTimer.Request? in
            guard case .emitAndOpenWindow(let emitted) = state.machine.valueReceived(value) else { return nil }
            delivery.enqueue(emitted)
            return state.timer.restart()
        }
        startTimer(request, after: interval)
    }

    override func timerFired(epoch: UInt64) {
        let request = relay.update { state, delivery -> OperatorTimer.Request? in
            guard state.timer.fire(epoch: epoch) else { return nil }
            guard case .emitAndOpenWindow(let emitted) = state.machine.windowEnded() else { return nil }
            delivery.enqueue(emitted)
            return state.timer.restart()
        }
        startTimer(request, after: interval)
    }

    override func receive(completion: StreamCompletion<Failure>) {
        let timer = relay.update { state, delivery -> ScheduledWork? in
            guard case .complete(let held) = state.machine.completed() else { return nil }
            if let held { delivery.enqueue(held) }
            delivery.enqueue(completion: completion)
            return state.timer.stop()
        }
        timer?.cancel()
    }
}
