extension SyncStream {
    /// Delivers every event `interval` later, on `executor`, in order.
    ///
    /// - Each value is delivered `interval` after it arrived (measured on `executor`'s clock), on the
    ///   executor; values keep their order and their spacing.
    /// - The completion (finished or failure) is delayed the same way, so it arrives after the last delayed
    ///   value: nothing is dropped, and errors are not swallowed.
    /// - `invalidate()` drops the events still waiting, cancels the timer (it never fires afterwards, and
    ///   releases what it captured) and ends the upstream subscription.
    ///
    /// ```
    /// interval: 2 ticks
    /// upstream:  a-b--c|
    /// delay:     --a-b--c|
    /// ```
    public func delay<Executor: StreamExecutor>(
        for interval: Duration,
        on executor: Executor
    ) -> Streams.Delay<Self, Executor> {
        Streams.Delay(upstream: self, interval: interval, executor: executor)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.delay(for:on:)`.
    public struct Delay<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose events are delayed.
        public let upstream: Upstream
        /// How long each event is held.
        public let interval: Duration
        /// The clock, and where events are delivered.
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
            let storage = TimedOperatorStorage(
                machine: DelayStateMachine<Output, Failure>(interval: interval), executor: executor,
                deliversOnExecutor: false, onValue: onValue, onCompletion: onCompletion)
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
