extension SyncStream {
    /// Ends the stream when the upstream stays silent for `interval`, as Combine's `timeout`.
    ///
    /// - The clock starts at subscription and restarts at each value: if no value and no completion
    ///   arrives within `interval` (measured on `executor`), the stream finishes — or fails with
    ///   `customError()` when given — and the upstream subscription is ended.
    /// - Values and an upstream completion pass through as the upstream delivers them (on its thread);
    ///   the timeout's completion is delivered on `executor`. Delivery is serialized either way, and
    ///   nothing follows the completion.
    /// - An upstream completion or `invalidate()` cancels the timer (it never fires afterwards, and
    ///   releases what it captured).
    ///
    /// ```
    /// interval: 3 ticks
    /// upstream:                      a-b----c|
    /// timeout:                       a-b--|
    /// timeout(customError: { e }):   a-b--#
    /// ```
    public func timeout<Executor: StreamExecutor>(
        _ interval: Duration,
        on executor: Executor,
        customError: (@Sendable () -> Failure)? = nil
    ) -> Streams.Timeout<Self, Executor> {
        Streams.Timeout(upstream: self, interval: interval, executor: executor, customError: customError)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.timeout(_:on:customError:)`.
    public struct Timeout<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream watched.
        public let upstream: Upstream
        /// The longest silence allowed, from subscription or from the last value.
        public let interval: Duration
        /// The clock, and where the timeout's completion is delivered.
        public let executor: Executor
        /// Makes the failure to end with; nil to finish normally.
        public let customError: (@Sendable () -> Failure)?

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(
            upstream: Upstream,
            interval: Duration,
            executor: Executor,
            customError: (@Sendable () -> Failure)?
        ) {
            self.upstream = upstream
            self.interval = interval
            self.executor = executor
            self.customError = customError
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = TimeoutCore<Output, Failure>(
                interval: interval,
                executor: executor,
                customError: customError,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}

/// The timeout logic, without threads: a deadline that each value pushes back.
///
/// The timer is not rescheduled per value: when it fires before the deadline (a value came meanwhile) it
/// is rescheduled for the remaining time, so a fast stream costs one clock read per value.
struct TimeoutStateMachine {
    enum FireAction {
        case none
        /// The deadline has passed: end the stream.
        case timedOut
        /// A value moved the deadline: wait this much longer.
        case wait(Duration)
    }

    private var deadline: StreamInstant
    private var isActive = true
    private let interval: Duration

    init(start: StreamInstant, interval: Duration) {
        self.interval = interval
        deadline = start + interval
    }

    /// Whether the value passes (the stream has not ended).
    mutating func valueReceived(at now: StreamInstant) -> Bool {
        guard isActive else { return false }
        deadline = now + interval
        return true
    }

    /// Whether the completion passes.
    mutating func completed() -> Bool {
        guard isActive else { return false }
        isActive = false
        return true
    }

    mutating func timerFired(at now: StreamInstant) -> FireAction {
        guard isActive else { return .none }
        if now >= deadline {
            isActive = false
            return .timedOut
        }
        return .wait(deadline - now)
    }

    mutating func cancelled() { isActive = false }
}

/// One timeout subscription: a relay (delivering inline) serializing upstream events with the timer's
/// completion.
final class TimeoutCore<Output: Sendable, Failure: Error>: TimedOperatorCore<
    Output, Failure, TimeoutCore<Output, Failure>.State
>, @unchecked Sendable
{
    // @unchecked Sendable: see `TimedOperatorCore`; `customError` is immutable and Sendable.
    struct State: TimedOperatorState {
        var machine: TimeoutStateMachine
        var timer = OperatorTimer()
        mutating func cancel() { machine.cancelled() }
    }

    private let customError: (@Sendable () -> Failure)?

    init(
        interval: Duration,
        executor: any StreamExecutor,
        customError: (@Sendable () -> Failure)?,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.customError = customError
        super.init(
            state: State(machine: TimeoutStateMachine(start: executor.now, interval: interval)),
            interval: interval,
            executor: executor,
            deliversOnExecutor: false,
            onValue: onValue,
            onCompletion: onCompletion
        )
    }

    /// The deadline starts at subscription.
    override func willConnect() {
        startTimer(relay.withExtra { $0.timer.restart() }, after: interval)
    }

    override func receive(_ value: Output) {
        let now = executor.now
        relay.update { state, delivery in
            if state.machine.valueReceived(at: now) { delivery.enqueue(value) }
        }
    }

    override func receive(completion: StreamCompletion<Failure>) {
        let timer = relay.update { state, delivery -> ScheduledWork? in
            guard state.machine.completed() else { return nil }
            delivery.enqueue(completion: completion)
            return state.timer.stop()
        }
        timer?.cancel()
    }

    override func timerFired(epoch: UInt64) {
        let now = executor.now
        let (action, request) = relay.withExtra { state -> (TimeoutStateMachine.FireAction, OperatorTimer.Request?) in
            guard state.timer.fire(epoch: epoch) else { return (.none, nil) }
            let action = state.machine.timerFired(at: now)
            switch action {
            case .none: return (action, nil)
            case .timedOut: return (action, nil)
            case .wait: return (action, state.timer.restart())
            }
        }
        switch action {
        case .none:
            return
        case .wait(let remaining):
            startTimer(request, after: remaining)
        case .timedOut:
            link.end()
            let completion: StreamCompletion<Failure> = customError.map { .failure($0()) } ?? .finished
            relay.send(completion: completion)
        }
    }
}
