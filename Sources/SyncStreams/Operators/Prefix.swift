extension SyncStream {
    /// Emits the first `maxLength` values, then finishes and ends the upstream subscription.
    ///
    /// Finishes right after the `maxLength`-th value (at once, without subscribing upstream, when
    /// `maxLength` is 0 — or negative, which counts as 0); an earlier upstream completion or failure
    /// passes through.
    ///
    /// ```
    /// upstream:   1 2 3 4 |
    /// prefix(2):  1 2|
    /// ```
    public func prefix(_ maxLength: Int) -> Streams.Prefix<Self> {
        Streams.Prefix(upstream: self, maxLength: max(maxLength, 0))
    }
}

extension Streams {
    /// The stream returned by `SyncStream.prefix(_:)`.
    public struct Prefix<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose first values are emitted.
        public let upstream: Upstream
        /// How many values to emit before finishing.
        public let maxLength: Int

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, maxLength: Int) {
            self.upstream = upstream
            self.maxLength = maxLength
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            guard maxLength > 0 else {
                CallbackScope.delivering { onCompletion(.finished) }
                return .empty
            }
            let remaining = SerialBox(maxLength)
            return subscribeFinishingEarly(to: upstream, onValue: onValue, onCompletion: onCompletion) { _ in
                remaining.value -= 1
                return remaining.value == 0 ? .emitAndFinish : .emit
            }
        }
    }
}
