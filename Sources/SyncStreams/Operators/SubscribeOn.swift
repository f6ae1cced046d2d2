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
            let core = SubscribeOnCore<Output, Failure>(
                executor: executor, onValue: onValue, onCompletion: onCompletion)
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}

/// One `subscribe(on:)` subscription. A relay (delivering inline) gates the downstream, because the
/// upstream subscription ends later, on the executor: removing the relay's subscriber is what makes "no
/// callback after `invalidate()` returns" hold.
final class SubscribeOnCore<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: `relay` and `link` are thread-safe; `subscriber` is written once in `init`,
    // before the core is shared; `executor` is immutable and Sendable.
    // `Extra` is an unused `Bool`, not `Void`, for ThreadSanitizer: see `ObserveOn`.
    private let relay = Relay<Output, Failure, Bool>(extra: false)
    private let executor: any StreamExecutor
    private let link = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        executor: any StreamExecutor,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.executor = executor
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<Upstream: SyncStream>(to upstream: Upstream)
    where Upstream.Output == Output, Upstream.Failure == Failure {
        let relay = self.relay
        let link = self.link
        executor.execute {
            guard !link.isCancelled else { return }
            let token = upstream.subscribe(
                onValue: { value in relay.send(value) },
                onCompletion: { completion in relay.send(completion: completion) }
            )
            link.attach(token)
        }
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        // Marks the link cancelled now (a subscribe job that has not run yet skips, or ends what it
        // subscribed at once, on the executor); the upstream token itself is invalidated on the executor.
        guard let token = link.take().token else { return }
        executor.execute { token.invalidate(waiting: false) }
    }
}
