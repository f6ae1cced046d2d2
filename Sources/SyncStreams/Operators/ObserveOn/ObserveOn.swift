/// How `observe(on:buffering:)` treats values that arrive faster than the executor delivers them.
public enum BufferingPolicy: Sendable, Hashable {
    /// Keep every value: each one is delivered, in order.
    case unbounded
    /// Conflate: a value not yet delivered is replaced by a newer one, so at most one value waits. A busy
    /// consumer (a UI thread) never builds a queue of stale values; the newest one is always delivered.
    case latest
}

extension SyncStream {
    /// Delivers every event (values and completion) on `executor`, in order.
    ///
    /// - The upstream is subscribed to on the calling thread; its callbacks only enqueue. One executor job
    ///   delivers what was queued when it started (batched, not one job per value), then, if more arrived
    ///   meanwhile, schedules another job for it — so a fast producer never holds the executor in one
    ///   endless job, and delivery stays serialized and in upstream order.
    /// - `.unbounded` (the default) delivers every value. `.latest` conflates: a value still waiting when a
    ///   newer one arrives is replaced by it; the value being delivered is never interrupted.
    /// - The completion (finished or failure) is always delivered, after the last value.
    /// - `invalidate()`: no callback starts after it returns (a job already queued on the executor then
    ///   delivers nothing), and the upstream subscription is ended without waiting.
    /// - On `ImmediateExecutor` there is nothing to hop to: events are delivered where the upstream
    ///   delivers them, with no queue (so `.latest` has nothing to conflate).
    ///
    /// ```
    /// upstream (sender thread):   1 2 3 4     |
    /// observe(on: q):             . . 1 2 3 4 |       (every value, on q)
    /// observe(on: q, .latest):    . . 1 . . 4 |       (q was busy with 1 while 2, 3, 4 arrived)
    /// ```
    @inlinable
    public func observe<Executor: StreamExecutor>(
        on executor: Executor,
        buffering: BufferingPolicy = .unbounded
    ) -> Streams.ObserveOn<Self, Executor> {
        Streams.ObserveOn(upstream: self, executor: executor, buffering: buffering)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.observe(on:buffering:)`.
    public struct ObserveOn<Upstream: SyncStream, Executor: StreamExecutor>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose events are moved to the executor.
        public let upstream: Upstream
        /// Where every event is delivered.
        public let executor: Executor
        /// Whether values waiting for delivery are kept or conflated.
        public let buffering: BufferingPolicy

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream, executor: Executor, buffering: BufferingPolicy) {
            self.upstream = upstream
            self.executor = executor
            self.buffering = buffering
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            // On the immediate executor "deliver on the executor" is "deliver where the upstream delivers":
            // the upstream already serializes and orders its events and keeps the invalidation guarantee,
            // and nothing waits to be conflated. So no hop at all (a relay would cost a job per value).
            if Executor.self == ImmediateExecutor.self {
                return upstream.subscribe(onValue: onValue, onCompletion: onCompletion)
            }
            let storage = ObserveOnStorage<Output, Failure>(
                executor: executor,
                buffering: buffering,
                onValue: onValue,
                onCompletion: onCompletion
            )
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
