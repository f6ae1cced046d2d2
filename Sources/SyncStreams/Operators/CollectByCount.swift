extension SyncStream {
    /// Collects values into arrays of `count` and emits each array as soon as it is full.
    ///
    /// - Emits an array of exactly `count` values each time that many arrived, synchronously, in the
    ///   callback of the value that filled it, on the upstream's delivering thread.
    /// - On `.finished`: emits the partial last array if it holds any value, then `.finished` (not
    ///   delivered if the subscriber invalidates from inside the callback receiving that array).
    /// - On `.failure`: forwards the failure; a partial array is dropped, not emitted (as in Combine).
    /// - `count` below 1 counts as 1: each value is emitted alone, in a one-element array.
    /// - Each subscription collects separately. Invalidating the token ends the upstream subscription and
    ///   releases the values of the partial array.
    ///
    /// ```
    /// upstream:    a b c d e |
    /// collect(2):  - [a,b] - [c,d] - ([e]|)
    /// ```
    public func collect(_ count: Int) -> Streams.CollectByCount<Self> {
        Streams.CollectByCount(upstream: self, count: max(count, 1))
    }
}

extension Streams {
    /// The stream returned by `SyncStream.collect(_:)`.
    public struct CollectByCount<Upstream: SyncStream>: SyncStream {
        public typealias Output = [Upstream.Output]
        public typealias Failure = Upstream.Failure

        /// The stream whose values are collected.
        public let upstream: Upstream
        /// How many values each emitted array holds (the last one, at finish, may hold fewer); at least 1.
        public let count: Int

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        /// A `count` below 1 counts as 1.
        public init(upstream: Upstream, count: Int) {
            self.upstream = upstream
            self.count = max(count, 1)
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let count = self.count
            let buffer = SerialBox<[Upstream.Output]>([])
            let link = UpstreamLink()
            let token = upstream.subscribe(
                onValue: { value in
                    // One allocation per array for usual counts; a huge count must not reserve memory ahead.
                    if buffer.value.isEmpty { buffer.value.reserveCapacity(min(count, 1024)) }
                    buffer.value.append(value)
                    guard buffer.value.count == count else { return }
                    var values: [Upstream.Output] = []
                    swap(&values, &buffer.value)
                    onValue(values)
                },
                onCompletion: { completion in
                    var values: [Upstream.Output] = []
                    swap(&values, &buffer.value)
                    if case .finished = completion, !values.isEmpty {
                        onValue(values)
                        // The subscriber may have invalidated re-entrantly while receiving the array.
                        if link.isCancelled { return }
                    }
                    onCompletion(completion)
                }
            )
            link.attach(token)
            return SubscriptionToken(link)
        }
    }
}
