extension SyncStream where Failure == Never {
    /// This stream, typed as one that may fail with `failureType` (it never does).
    ///
    /// Values and `.finished` pass through unchanged and synchronously, on the upstream's delivering
    /// thread; no lock and no allocation per value. Use it to combine a stream that cannot fail with one
    /// that can (`combineLatest` and `merge(with:)` also accept such a pair directly and apply this for
    /// you). Invalidating the token ends the upstream subscription.
    ///
    /// ```
    /// upstream (Never):                 a b |
    /// setFailureType(to: E.self) (E):   a b |
    /// ```
    @inlinable
    public func setFailureType<NewFailure: Error>(
        to failureType: NewFailure.Type
    ) -> Streams.SetFailureType<Self, NewFailure> {
        Streams.SetFailureType(upstream: self)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.setFailureType(to:)`.
    public struct SetFailureType<Upstream: SyncStream, Failure: Error>: SyncStream
    where Upstream.Failure == Never {
        public typealias Output = Upstream.Output

        /// The stream that cannot fail.
        public let upstream: Upstream

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream) { self.upstream = upstream }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            upstream.subscribe(onValue: onValue, onCompletion: { completion in onCompletion(completion.promoted()) })
        }
    }
}
