extension SyncStream {
    /// Emits `values` first, then the upstream's values.
    ///
    /// The prepended values are delivered during `subscribe`, before the upstream is subscribed to; values
    /// the upstream emits before that (for a subject: sent before the prepended values were delivered)
    /// are not seen. Completion and failure come from the upstream.
    ///
    /// ```
    /// upstream:          3 4 |
    /// prepend(1, 2): 1 2 3 4 |
    /// ```
    public func prepend(_ values: Output...) -> Streams.Prepend<Self> {
        Streams.Prepend(upstream: self, values: values)
    }

    /// Emits the elements of `values` first, then the upstream's values. See `prepend(_:)`.
    public func prepend<S: Sequence>(contentsOf values: S) -> Streams.Prepend<Self> where S.Element == Output {
        Streams.Prepend(upstream: self, values: Array(values))
    }
}

extension Streams {
    /// The stream returned by `SyncStream.prepend(_:)`.
    public struct Prepend<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The stream that follows the prepended values.
        public let upstream: Upstream
        /// The values emitted first.
        public let values: [Output]

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, values: [Output]) {
            self.upstream = upstream
            self.values = values
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            CallbackScope.delivering { for value in values { onValue(value) } }
            return upstream.subscribe(onValue: onValue, onCompletion: onCompletion)
        }
    }
}
