extension SyncStream {
    /// Performs the upstream subscription, and its invalidation, on `executor`.
    ///
    /// - `subscribe` returns at once; the upstream is subscribed to in a job on `executor` (skipped if the
    ///   subscription was invalidated before the job ran).
    /// - Values and the completion pass through as the upstream delivers them, on the upstream's thread,
    ///   serialized and in order.
    /// - `invalidate()`: no callback starts after it returns; ending the upstream subscription happens
    ///   in a job on `executor`.
    ///
    /// ```
    /// subscribe(on: q)      the upstream's subscribe runs on q
    /// upstream:             1 2 |
    /// subscribe(on: q):     1 2 |
    /// ```
    public func subscribe<Executor: StreamExecutor>(on executor: Executor) -> Streams.SubscribeOn<Self, Executor> {
        Streams.SubscribeOn(upstream: self, executor: executor)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.subscribe(on:)`.
    public struct SubscribeOn<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream subscribed to on the executor.
        public let upstream: Upstream
        /// Where the upstream is subscribed to and its subscription ended.
        public let executor: Executor

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, executor: Executor) {
            self.upstream = upstream
            self.executor = executor
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = SubscribeOnStorage<Output, Failure>(
                executor: executor, onValue: onValue, onCompletion: onCompletion)
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}
