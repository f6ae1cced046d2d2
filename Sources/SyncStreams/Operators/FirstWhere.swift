extension SyncStream {
    /// Emits the first value that satisfies `predicate`, then finishes and ends the upstream
    /// subscription.
    ///
    /// Finishes without a value if the upstream finishes first; a failure passes through.
    ///
    /// ```
    /// upstream:                  1 4 6 |
    /// first(where: { $0 > 3 }):    4|
    /// ```
    public func first(where predicate: @escaping @Sendable (Output) -> Bool) -> Streams.FirstWhere<Self> {
        Streams.FirstWhere(upstream: self, predicate: predicate)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.first(where:)`.
    public struct FirstWhere<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream searched.
        public let upstream: Upstream
        /// The condition the emitted value meets.
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
                predicate(value) ? .emitAndFinish : .skip
            }
        }
    }
}
