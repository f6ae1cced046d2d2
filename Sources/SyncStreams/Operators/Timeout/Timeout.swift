extension SyncStream {
    /// Ends the stream when the upstream stays silent for `interval`: when and how it ends are Combine's
    /// `timeout`'s, but values are not moved to `executor` (Combine delivers every event on its scheduler).
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
            let customError = self.customError
            let machine = TimeoutStateMachine<Output, Failure>(start: executor.now, interval: interval) {
                customError.map { .failure($0()) } ?? .finished
            }
            let storage = TimedOperatorStorage(
                machine: machine, executor: executor, deliversOnExecutor: false, onValue: onValue,
                onCompletion: onCompletion)
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
