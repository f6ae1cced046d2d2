extension SyncStream {
    /// Transforms each value with `transform` and emits the non-nil results.
    ///
    /// Values for which `transform` returns nil are dropped; completion and failure pass through
    /// unchanged. Synchronous, no lock and no allocation per value.
    ///
    /// ```
    /// upstream:               "1" "x" "3" |
    /// compactMap { Int($0) }:  1       3  |
    /// ```
    @inlinable
    public func compactMap<T: Sendable>(
        _ transform: @escaping @Sendable (Output) -> T?
    ) -> Streams.CompactMap<Self, T> {
        Streams.CompactMap(upstream: self, transform: transform)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.compactMap(_:)`.
    public struct CompactMap<Upstream: SyncStream, Output: Sendable>: SyncStream {
        public typealias Failure = Upstream.Failure

        /// The stream whose values are transformed.
        public let upstream: Upstream
        /// The transformation; nil drops the value.
        public let transform: @Sendable (Upstream.Output) -> Output?

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) -> Output?) {
            self.upstream = upstream
            self.transform = transform
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let transform = self.transform
            return upstream.subscribe(
                onValue: { value in
                    if let transformed = transform(value) { onValue(transformed) }
                },
                onCompletion: onCompletion
            )
        }
    }
}
