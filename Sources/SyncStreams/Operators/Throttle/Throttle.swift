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
    ///   when the window ends — so no two values go out within one interval, as in Combine (OpenCombine)
    ///   and RxSwift; the final 100 % is never dropped. With nothing held, the completion goes out at once.
    /// - Every event is delivered on `executor`, serialized and in order.
    /// - `invalidate()` cancels the window's timer (it never fires afterwards, and releases what it
    ///   captured) and ends the upstream subscription.
    ///
    /// ```
    /// interval: 3 ticks        (the group (f|) happens at one time)
    /// upstream:                abc-------d-e-f|
    /// throttle(latest: true):  a--c------d--e--(f|)
    /// throttle(latest: false): a--b------d--e--(f|)
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
            let storage = TimedOperatorStorage(
                machine: ThrottleStateMachine<Output, Failure>(interval: interval, latest: latest), executor: executor,
                deliversOnExecutor: true, onValue: onValue, onCompletion: onCompletion)
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
