extension SyncStream {
    /// Shares one upstream subscription among all subscribers (multicast, reference-counted).
    ///
    /// - The first subscriber connects to the upstream; later subscribers join that connection and
    ///   receive the values emitted after they subscribed.
    /// - When the last subscriber invalidates before the upstream completed, the upstream subscription
    ///   ends; the next subscriber connects anew.
    /// - When the upstream completes, every current subscriber receives the completion, and so does every
    ///   later one, at once: the upstream is never subscribed to again (as Combine's `share()`).
    /// - Delivery to each subscriber is serialized; fan-out never holds a lock. Which thread delivers: the
    ///   upstream's, inline (or a thread already delivering: the value is queued).
    /// - `invalidate()` detaches that subscriber (no callback of it starts after it returns); the last one
    ///   leaving ends the upstream subscription.
    ///
    /// ```
    /// upstream:      1 2 3 4 |
    /// subscriber A:  1 2 3 4 |
    /// subscriber B:      3 4 |      (subscribed after 2)
    /// ```
    public func share() -> Streams.Share<Self> { Streams.Share(upstream: self, replay: 0) }

    /// Like `share()`, and a late subscriber first receives the last `count` values of the connection
    /// (a negative `count` counts as 0) — also after the upstream completed: then the replay, then the
    /// completion.
    ///
    /// ```
    /// upstream:               1 2 3 4 |
    /// share(replay: 1), B:        2 3 4 |   (subscribed after 2: gets 2 at once)
    /// ```
    public func share(replay count: Int) -> Streams.Share<Self> {
        Streams.Share(upstream: self, replay: max(count, 0))
    }
}

extension Streams {
    /// The stream returned by `share()` and `share(replay:)`. Copies share the same connection.
    public struct Share<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        private let core: ShareStorage<Upstream>

        init(upstream: Upstream, replay: Int) { core = ShareStorage(upstream: upstream, replay: replay) }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            core.subscribe(onValue: onValue, onCompletion: onCompletion)
        }
    }
}
