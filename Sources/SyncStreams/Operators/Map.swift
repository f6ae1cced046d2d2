extension SyncStream {
    /// Transforms each value with `transform`.
    ///
    /// Emits `transform(value)` for each upstream value, synchronously, in the upstream's callback;
    /// completion and failure pass through unchanged. No lock and no allocation per value.
    ///
    /// ```
    /// upstream:         1  2  3  |
    /// map { $0 * 10 }: 10 20 30  |
    /// ```
    @inlinable
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Output) -> T) -> Streams.Map<Self, T> {
        Streams.Map(upstream: self, transform: transform)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.map(_:)`.
    public struct Map<Upstream: SyncStream, Output: Sendable>: SyncStream {
        public typealias Failure = Upstream.Failure

        /// The stream whose values are transformed.
        public let upstream: Upstream
        /// The transformation applied to each value.
        public let transform: @Sendable (Upstream.Output) -> Output

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) -> Output) {
            self.upstream = upstream
            self.transform = transform
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let transform = self.transform
            return upstream.subscribe(onValue: { onValue(transform($0)) }, onCompletion: onCompletion)
        }
    }
}
