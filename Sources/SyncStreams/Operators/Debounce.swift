extension SyncStream {
    /// Emits a value only once `interval` has passed without a newer one, delivered on `executor`.
    ///
    /// - Each value replaces the pending one and restarts the timer; when the timer fires, the pending
    ///   value is delivered.
    /// - On finish, a pending value is delivered at once, then the completion.
    /// - On failure, a pending value is delivered at once, then the failure: errors are never swallowed.
    /// - Every event is delivered on `executor`, serialized and in order.
    /// - `invalidate()` cancels the timer (it never fires afterwards, and releases what it captured) and
    ///   ends the upstream subscription.
    ///
    /// ```
    /// interval: 3 ticks      (a group such as (e|) happens at one time)
    /// upstream:  ab----c-d----e|          ab-#
    /// debounce:  ----b------d--(e|)       ---(b#)
    /// ```
    public func debounce<Executor: StreamExecutor>(
        for interval: Duration,
        on executor: Executor
    ) -> Streams.Debounce<Self, Executor> {
        Streams.Debounce(upstream: self, interval: interval, executor: executor)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.debounce(for:on:)`.
    public struct Debounce<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose values are debounced.
        public let upstream: Upstream
        /// How long the upstream must stay quiet before the pending value is delivered.
        public let interval: Duration
        /// Where values are delivered and the quiet time is measured.
        public let executor: Executor

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, interval: Duration, executor: Executor) {
            self.upstream = upstream
            self.interval = interval
            self.executor = executor
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = DebounceCore<Output, Failure>(
                interval: interval,
                executor: executor,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}

/// The debounce logic, without threads or time. Its owner performs the returned actions.
struct DebounceStateMachine<Value> {
    enum Action {
        case none
        /// (Re)start the timer.
        case restartTimer
        /// Deliver the value.
        case emit(Value)
        /// Deliver the pending value, if any, then the completion; stop the timer.
        case complete(flushing: Value?)
    }

    private var pending: Value?
    private var isTerminated = false

    init() {}

    mutating func valueReceived(_ value: Value) -> Action {
        guard !isTerminated else { return .none }
        pending = value
        return .restartTimer
    }

    mutating func timerFired() -> Action {
        guard !isTerminated, let value = pending.take() else { return .none }
        return .emit(value)
    }

    mutating func completed() -> Action {
        guard !isTerminated else { return .none }
        isTerminated = true
        return .complete(flushing: pending.take())
    }

    mutating func cancelled() {
        isTerminated = true
        pending = nil
    }
}

/// One debounce subscription: a relay delivering on the executor, the state machine in its `Extra`.
final class DebounceCore<Output: Sendable, Failure: Error>: TimedOperatorCore<
    Output, Failure, DebounceCore<Output, Failure>.State
>, @unchecked Sendable
{
    // @unchecked Sendable: see `TimedOperatorCore`; this subclass adds no stored state.
    struct State: TimedOperatorState {
        var machine = DebounceStateMachine<Output>()
        var timer = OperatorTimer()
        mutating func cancel() { machine.cancelled() }
    }

    init(
        interval: Duration,
        executor: any StreamExecutor,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        super.init(
            state: State(),
            interval: interval,
            executor: executor,
            deliversOnExecutor: true,
            onValue: onValue,
            onCompletion: onCompletion
        )
    }

    override func receive(_ value: Output) {
        let request = relay.withExtra { state -> OperatorTimer.Request? in
            guard case .restartTimer = state.machine.valueReceived(value) else { return nil }
            return state.timer.restart()
        }
        startTimer(request, after: interval)
    }

    override func timerFired(epoch: UInt64) {
        relay.update { state, delivery in
            guard state.timer.fire(epoch: epoch), case .emit(let value) = state.machine.timerFired() else { return }
            delivery.enqueue(value)
        }
    }

    override func receive(completion: StreamCompletion<Failure>) {
        let timer = relay.update { state, delivery -> ScheduledWork? in
            guard case .complete(let pending) = state.machine.completed() else { return nil }
            if let pending { delivery.enqueue(pending) }
            delivery.enqueue(completion: completion)
            return state.timer.stop()
        }
        timer?.cancel()
    }
}
