extension SyncStream {
    /// Drops a value when `isDuplicate(previous, value)` says it repeats the previously emitted one.
    ///
    /// The first value is always emitted; each later value is compared with the last value emitted to this
    /// subscriber. Completion and failure pass through unchanged.
    ///
    /// ```
    /// upstream:            1 1 2 2 1 |
    /// removeDuplicates():  1   2   1 |
    /// ```
    public func removeDuplicates(
        by isDuplicate: @escaping @Sendable (Output, Output) -> Bool
    ) -> Streams.RemoveDuplicates<Self> {
        Streams.RemoveDuplicates(upstream: self, isDuplicate: isDuplicate)
    }
}

extension SyncStream where Output: Equatable {
    /// Drops a value equal to the previously emitted one. See `removeDuplicates(by:)`.
    public func removeDuplicates() -> Streams.RemoveDuplicates<Self> {
        removeDuplicates(by: ==)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.removeDuplicates(by:)` and `removeDuplicates()`.
    public struct RemoveDuplicates<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream whose repeats are dropped.
        public let upstream: Upstream
        /// Whether the second value repeats the first.
        public let isDuplicate: @Sendable (Output, Output) -> Bool

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, isDuplicate: @escaping @Sendable (Output, Output) -> Bool) {
            self.upstream = upstream
            self.isDuplicate = isDuplicate
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let previous = SerialBox<Output?>(nil)
            let isDuplicate = self.isDuplicate
            return upstream.subscribe(
                onValue: { value in
                    if let last = previous.value, isDuplicate(last, value) { return }
                    previous.value = value
                    onValue(value)
                },
                onCompletion: onCompletion
            )
        }
    }
}
