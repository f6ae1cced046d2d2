extension SyncStream {
    /// Emits each step of an accumulation: `nextPartialResult(previous, value)`, starting from
    /// `initialResult`.
    ///
    /// Each subscription has its own accumulator, starting at `initialResult`; the initial result itself
    /// is not emitted. Completion and failure pass through unchanged.
    ///
    /// ```
    /// upstream:        1 2 3 |
    /// scan(0, +):      1 3 6 |
    /// ```
    public func scan<Result: Sendable>(
        _ initialResult: Result,
        _ nextPartialResult: @escaping @Sendable (Result, Output) -> Result
    ) -> Streams.Scan<Self, Result> {
        Streams.Scan(upstream: self, initialResult: initialResult, nextPartialResult: nextPartialResult)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.scan(_:_:)`.
    public struct Scan<Upstream: SyncStream, Output: Sendable>: SyncStream {
        public typealias Failure = Upstream.Failure

        /// The stream whose values are accumulated.
        public let upstream: Upstream
        /// The accumulator's starting value, for every subscription.
        public let initialResult: Output
        /// Combines the previous result with the next value.
        public let nextPartialResult: @Sendable (Output, Upstream.Output) -> Output

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(
            upstream: Upstream,
            initialResult: Output,
            nextPartialResult: @escaping @Sendable (Output, Upstream.Output) -> Output
        ) {
            self.upstream = upstream
            self.initialResult = initialResult
            self.nextPartialResult = nextPartialResult
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let accumulator = SerialBox(initialResult)
            let nextPartialResult = self.nextPartialResult
            return upstream.subscribe(
                onValue: { value in
                    accumulator.value = nextPartialResult(accumulator.value, value)
                    onValue(accumulator.value)
                },
                onCompletion: onCompletion
            )
        }
    }
}
