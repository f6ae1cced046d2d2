extension SyncStream {
    /// Emits only the values for which `isIncluded` returns true.
    ///
    /// Completion and failure pass through unchanged. Synchronous, no lock and no allocation per value.
    ///
    /// ```
    /// upstream:               1 2 3 4 |
    /// filter { $0 % 2 == 0 }:   2   4 |
    /// ```
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Output) -> Bool) -> Streams.Filter<Self> {
        Streams.Filter(upstream: self, isIncluded: isIncluded)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.filter(_:)`.
    public struct Filter<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose values are filtered.
        public let upstream: Upstream
        /// The predicate a value must satisfy to be emitted.
        public let isIncluded: @Sendable (Output) -> Bool

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream, isIncluded: @escaping @Sendable (Output) -> Bool) {
            self.upstream = upstream
            self.isIncluded = isIncluded
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let isIncluded = self.isIncluded
            return upstream.subscribe(
                onValue: { value in
                    if isIncluded(value) { onValue(value) }
                },
                onCompletion: onCompletion
            )
        }
    }
}
