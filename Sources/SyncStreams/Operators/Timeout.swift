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
final class TimeoutCore<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: mutable state is the relay's `Extra`, guarded by its lock; `link` is
    // thread-safe; `subscriber` is written once in `init`, before the core is shared; the rest is
    // immutable and Sendable.
    struct State: TimedOperatorState {
        var machine: TimeoutStateMachine
        var timer = OperatorTimer()
    }

    private let relay: Relay<Output, Failure, State>
    private let interval: Duration
    private let executor: any StreamExecutor
    private let customError: (@Sendable () -> Failure)?
    private let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        interval: Duration,
        executor: any StreamExecutor,
        customError: (@Sendable () -> Failure)?,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.interval = interval
        self.executor = executor
        self.customError = customError
        relay = Relay(extra: State(machine: TimeoutStateMachine(start: executor.now, interval: interval)))
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        let request = relay.withExtra { $0.timer.restart() }
        startTimer(request, after: interval)
        let token = upstream.subscribe(
            onValue: { value in self.receive(value) },
            onCompletion: { completion in self.receive(completion: completion) }
        )
        link.attach(token)
    }

    private func startTimer(_ request: OperatorTimer.Request?, after delay: Duration) {
        relay.startTimer(request, after: delay, on: executor) { epoch in self.timerFired(epoch: epoch) }
    }

    private func receive(_ value: Output) {
        let now = executor.now
        relay.update { state, delivery in
            if state.machine.valueReceived(at: now) { delivery.enqueue(value) }
        }
    }

    private func receive(completion: StreamCompletion<Failure>) {
        let timer = relay.update { state, delivery -> ScheduledWork? in
            guard state.machine.completed() else { return nil }
            delivery.enqueue(completion: completion)
            return state.timer.stop()
        }
        timer?.cancel()
    }

    private func timerFired(epoch: UInt64) {
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

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        relay.withExtra { $0.machine.cancelled() }
        relay.stopTimer()
        link.end()
    }
}
