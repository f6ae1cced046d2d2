extension SyncStream where Output: SyncStream, Output.Failure == Failure {
    /// Flattens a stream of streams by following only the latest inner stream.
    ///
    /// - Each new inner stream replaces the previous one: the previous subscription ends at once, and any
    ///   value it still delivers is dropped.
    /// - Finishes when the outer stream finished and the current inner stream (if any) finished.
    /// - A failure of the outer or the current inner stream is forwarded at once and ends the rest.
    /// - Delivery is serialized. Which thread delivers: the thread of the inner stream that emitted, inline
    ///   — or a thread already delivering (the value is queued).
    /// - `invalidate()` ends the outer and the current inner subscription; no callback starts after it
    ///   returns.
    ///
    /// ```
    /// outer:   A - - - B - - |
    /// A:       - 1 2 - - 3 |          (3 is dropped: B replaced A)
    /// B:       - - - - - - 4 - 5 |
    /// output:  - 1 2 - - - 4 - 5 |
    /// ```
    /// Example: total progress over a user's changing set of sessions.
    public func switchToLatest() -> Streams.SwitchToLatest<Self> { Streams.SwitchToLatest(upstream: self) }
}

extension SyncStream {
    /// Maps each value to a stream and follows only the latest one: `map(transform).switchToLatest()`.
    public func flatMapLatest<Inner: SyncStream>(
        _ transform: @escaping @Sendable (Output) -> Inner
    ) -> Streams.SwitchToLatest<Streams.Map<Self, Inner>> where Inner.Failure == Failure {
        map(transform).switchToLatest()
    }
}

extension Streams {
    /// The stream returned by `switchToLatest()` and `flatMapLatest(_:)`.
    public struct SwitchToLatest<Upstream: SyncStream>: SyncStream
    where Upstream.Output: SyncStream, Upstream.Output.Failure == Upstream.Failure {
        public typealias Output = Upstream.Output.Output
        public typealias Failure = Upstream.Failure

        /// The stream of streams.
        public let upstream: Upstream

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream) { self.upstream = upstream }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = SwitchToLatestStorage<Upstream.Output>(onValue: onValue, onCompletion: onCompletion)
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}
