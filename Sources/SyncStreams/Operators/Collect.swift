extension SyncStream {
    /// Collects every value and emits them as one array when the upstream finishes.
    ///
    /// - On `.finished`: emits the array of all values received, in order (`[]` if there were none), then
    ///   `.finished` — both synchronously, in the upstream's completion callback, on its delivering thread.
    ///   If the subscriber invalidates from inside the callback receiving the array, `.finished` is not
    ///   delivered.
    /// - On `.failure`: forwards the failure and emits nothing; the collected values are dropped.
    /// - Each subscription collects separately. Invalidating the token ends the upstream subscription and
    ///   releases the values collected so far.
    ///
    /// The buffer grows without bound while the upstream keeps emitting; use `collect(_:)` for batches.
    ///
    /// ```
    /// upstream:   a b c |
    /// collect():  - - - ([a,b,c]|)
    /// ```
    public func collect() -> Streams.Collect<Self> {
        Streams.Collect(upstream: self)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.collect()`.
    public struct Collect<Upstream: SyncStream>: SyncStream {
        public typealias Output = [Upstream.Output]
        public typealias Failure = Upstream.Failure

        /// The stream whose values are collected.
        public let upstream: Upstream

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream) { self.upstream = upstream }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let buffer = SerialBox<[Upstream.Output]>([])
            let link = UpstreamLink()
            let token = upstream.subscribe(
                onValue: { value in buffer.value.append(value) },
                onCompletion: { completion in
                    var values: [Upstream.Output] = []
                    swap(&values, &buffer.value)
                    if case .finished = completion {
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
