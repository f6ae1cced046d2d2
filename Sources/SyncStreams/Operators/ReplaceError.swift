extension SyncStream {
    /// Replaces a failure with a last value, then finishes: the result cannot fail.
    ///
    /// Values pass through; `.finished` passes through; `.failure` becomes `output` followed by
    /// `.finished` (no `.finished` if the subscriber invalidated from inside the callback for `output`).
    ///
    /// ```
    /// upstream:           a b #
    /// replaceError(x):    a b (x|)
    /// ```
    public func replaceError(with output: Output) -> Streams.ReplaceError<Self> {
        Streams.ReplaceError(upstream: self, output: output)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.replaceError(with:)`.
    public struct ReplaceError<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Never

        /// The stream whose failure is replaced.
        public let upstream: Upstream
        /// The value emitted in place of a failure.
        public let output: Output

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, output: Output) {
            self.upstream = upstream
            self.output = output
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Never>) -> Void
        ) -> SubscriptionToken {
            let output = self.output
            let link = UpstreamLink()
            let token = upstream.subscribe(
                onValue: onValue,
                onCompletion: { completion in
                    if case .failure = completion {
                        onValue(output)
                        // The subscriber may have invalidated re-entrantly while receiving `output`.
                        if link.isCancelled { return }
                    }
                    onCompletion(.finished)
                }
            )
            link.attach(token)
            return SubscriptionToken(link)
        }
    }
}
