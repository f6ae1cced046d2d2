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
            let storage = TimedOperatorStorage(
                machine: DebounceStateMachine<Output, Failure>(interval: interval), executor: executor,
                deliversOnExecutor: true, onValue: onValue, onCompletion: onCompletion)
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
