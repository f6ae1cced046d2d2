extension SyncStream {
    /// Replaces each `nil` value with `output`; the result's values are not optional.
    ///
    /// Emits `value ?? output` for each upstream value, synchronously, in the upstream's callback, on its
    /// delivering thread; completion and failure pass through unchanged. No lock and no allocation per
    /// value. Invalidating the token ends the upstream subscription.
    ///
    /// ```
    /// upstream:            1 nil 3 |
    /// replaceNil(with: 0): 1  0  3 |
    /// ```
    @inlinable
    public func replaceNil<T: Sendable>(with output: T) -> Streams.ReplaceNil<Self, T> where Output == T? {
        Streams.ReplaceNil(upstream: self, output: output)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.replaceNil(with:)`.
    public struct ReplaceNil<Upstream: SyncStream, Output: Sendable>: SyncStream where Upstream.Output == Output? {
        public typealias Failure = Upstream.Failure

        /// The stream whose `nil` values are replaced.
        public let upstream: Upstream
        /// The value emitted in place of `nil`.
        public let output: Output

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream, output: Output) {
            self.upstream = upstream
            self.output = output
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let output = self.output
            return upstream.subscribe(onValue: { onValue($0 ?? output) }, onCompletion: onCompletion)
        }
    }
}
