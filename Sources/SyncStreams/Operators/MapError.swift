extension SyncStream {
    /// Transforms a failure with `transform`; values and `.finished` pass through unchanged.
    ///
    /// Synchronous: each event is delivered on the thread that delivered it upstream, in the upstream's
    /// callback; `transform` runs there, once, for a failure. No lock and no allocation per value.
    /// Invalidating the token ends the upstream subscription and releases `transform`.
    ///
    /// ```
    /// upstream:                  a b #      (# is the upstream's error e)
    /// mapError { Wrapped($0) }:  a b #      (# is Wrapped(e))
    /// ```
    @inlinable
    public func mapError<NewFailure: Error>(
        _ transform: @escaping @Sendable (Failure) -> NewFailure
    ) -> Streams.MapError<Self, NewFailure> {
        Streams.MapError(upstream: self, transform: transform)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.mapError(_:)`.
    public struct MapError<Upstream: SyncStream, Failure: Error>: SyncStream {
        public typealias Output = Upstream.Output

        /// The stream whose failure is transformed.
        public let upstream: Upstream
        /// The transformation applied to a failure.
        public let transform: @Sendable (Upstream.Failure) -> Failure

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream, transform: @escaping @Sendable (Upstream.Failure) -> Failure) {
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
                onValue: onValue,
                onCompletion: { completion in onCompletion(completion.mapFailure(transform)) }
            )
        }
    }
}
