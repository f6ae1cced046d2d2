extension SyncStream {
    /// Emits values while `predicate` holds; at the first value for which it does not, finishes (without
    /// emitting that value) and ends the upstream subscription.
    ///
    /// An upstream completion or failure before that passes through.
    ///
    /// ```
    /// upstream:                1 2 5 1 |
    /// prefix(while: { $0 < 3 }): 1 2 |
    /// ```
    public func prefix(while predicate: @escaping @Sendable (Output) -> Bool) -> Streams.PrefixWhile<Self> {
        Streams.PrefixWhile(upstream: self, predicate: predicate)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.prefix(while:)`.
    public struct PrefixWhile<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose leading values are emitted.
        public let upstream: Upstream
        /// The condition a value must meet to be emitted.
        public let predicate: @Sendable (Output) -> Bool

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, predicate: @escaping @Sendable (Output) -> Bool) {
            self.upstream = upstream
            self.predicate = predicate
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let predicate = self.predicate
            return subscribeFinishingEarly(to: upstream, onValue: onValue, onCompletion: onCompletion) { value in
                predicate(value) ? .emit : .finish
            }
        }
    }
}
