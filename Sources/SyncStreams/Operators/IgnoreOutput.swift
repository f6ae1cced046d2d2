extension SyncStream {
    /// Drops every value and passes on only the completion: the result's `Output` is `Never`.
    ///
    /// `.finished` and `.failure` are delivered synchronously, on the thread that delivered them upstream.
    /// The subscriber's value closure is not kept. Invalidating the token ends the upstream subscription.
    /// Useful to wait for the end of a stream (`try await stream.ignoreOutput().first()`).
    ///
    /// ```
    /// upstream:        a b c |
    /// ignoreOutput():  - - - |
    /// ```
    @inlinable
    public func ignoreOutput() -> Streams.IgnoreOutput<Self> {
        Streams.IgnoreOutput(upstream: self)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.ignoreOutput()`.
    public struct IgnoreOutput<Upstream: SyncStream>: SyncStream {
        public typealias Output = Never
        public typealias Failure = Upstream.Failure

        /// The stream whose values are dropped.
        public let upstream: Upstream

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(upstream: Upstream) { self.upstream = upstream }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Never) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            upstream.subscribe(onValue: { _ in }, onCompletion: onCompletion)
        }
    }
}
