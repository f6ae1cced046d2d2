extension SyncStream {
    /// Combines the latest values of this stream and `other` into pairs.
    ///
    /// - Emits once both inputs have emitted, then whenever either emits, with the latest of each.
    /// - Finishes when both inputs finished — or at once when an input finishes without ever emitting
    ///   (no pair can ever form). The last pair is always delivered before the completion.
    /// - A failure of either input is forwarded at once and ends the other input's subscription.
    /// - Values arriving while the subscriber is busy (re-entrantly, or from another thread) are queued,
    ///   never lost; delivery is serialized.
    /// - Which thread delivers: the thread of the input that emitted, inline — or, when another thread is
    ///   already delivering, that thread (the value is queued); a drain that other threads keep busy hands
    ///   the rest to a global queue after a bounded number of their values (see `PassthroughSubject`).
    /// - `invalidate()` ends every input's subscription; no callback starts after it returns.
    ///
    /// ```
    /// self:   1---2-------|
    /// other:  -a-----b--|
    /// output: -A--B--C----|        A = (1,a), B = (2,a), C = (2,b)
    /// ```
    @inlinable
    public func combineLatest<Other: SyncStream>(
        _ other: Other
    ) -> Streams.CombineLatest<Self, Other> where Other.Failure == Failure {
        Streams.CombineLatest(self, other)
    }

    /// Combines the latest values of this stream and `other` with `transform`. See `combineLatest(_:)`;
    /// `transform` runs on the delivering thread, outside any lock.
    @inlinable
    public func combineLatest<Other: SyncStream, T: Sendable>(
        _ other: Other,
        _ transform: @escaping @Sendable (Output, Other.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest<Self, Other>, T> where Other.Failure == Failure {
        Streams.CombineLatest(self, other).map { transform($0.0, $0.1) }
    }

    /// Combines the latest values of three streams into triples. See `combineLatest(_:)`.
    @inlinable
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Self, B, C> where B.Failure == Failure, C.Failure == Failure {
        Streams.CombineLatest3(self, b, c)
    }

    /// Combines the latest values of three streams with `transform`. See `combineLatest(_:)`.
    @inlinable
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest3<Self, B, C>, T> where B.Failure == Failure, C.Failure == Failure {
        Streams.CombineLatest3(self, b, c).map { transform($0.0, $0.1, $0.2) }
    }

    /// Combines the latest values of four streams into quadruples. See `combineLatest(_:)`.
    @inlinable
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, B, C, D>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Failure {
        Streams.CombineLatest4(self, b, c, d)
    }

    /// Combines the latest values of four streams with `transform`. See `combineLatest(_:)`.
    @inlinable
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ d: D,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output, D.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest4<Self, B, C, D>, T>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Failure {
        Streams.CombineLatest4(self, b, c, d).map { transform($0.0, $0.1, $0.2, $0.3) }
    }
}

extension Streams {
    /// The stream returned by `combineLatest(_:)` on two streams: pairs of their latest values.
    public struct CombineLatest<A: SyncStream, B: SyncStream>: SyncStream where A.Failure == B.Failure {
        public typealias Output = (A.Output, B.Output)
        public typealias Failure = A.Failure

        /// The first input.
        public let a: A
        /// The second input.
        public let b: B

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = MultiInputStorage(
                machine: CombineLatestStateMachine<(A.Output?, B.Output?), Output, Failure>(
                    empty: (nil, nil), inputCount: 2, combine: { ($0.0!, $0.1!) }),
                inputCount: 2,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(0, to: a) { replace(&$0.0, with: $1) }
            core.connect(1, to: b) { replace(&$0.1, with: $1) }
            return SubscriptionToken(core)
        }
    }

    /// The stream returned by `combineLatest(_:_:)`: triples of the latest values of three streams.
    public struct CombineLatest3<A: SyncStream, B: SyncStream, C: SyncStream>: SyncStream
    where A.Failure == B.Failure, A.Failure == C.Failure {
        public typealias Output = (A.Output, B.Output, C.Output)
        public typealias Failure = A.Failure

        /// The first input.
        public let a: A
        /// The second input.
        public let b: B
        /// The third input.
        public let c: C

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(_ a: A, _ b: B, _ c: C) {
            self.a = a
            self.b = b
            self.c = c
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = MultiInputStorage(
                machine: CombineLatestStateMachine<(A.Output?, B.Output?, C.Output?), Output, Failure>(
                    empty: (nil, nil, nil), inputCount: 3, combine: { ($0.0!, $0.1!, $0.2!) }),
                inputCount: 3,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(0, to: a) { replace(&$0.0, with: $1) }
            core.connect(1, to: b) { replace(&$0.1, with: $1) }
            core.connect(2, to: c) { replace(&$0.2, with: $1) }
            return SubscriptionToken(core)
        }
    }

    /// The stream returned by `combineLatest(_:_:_:)`: quadruples of the latest values of four streams.
    public struct CombineLatest4<A: SyncStream, B: SyncStream, C: SyncStream, D: SyncStream>: SyncStream
    where A.Failure == B.Failure, A.Failure == C.Failure, A.Failure == D.Failure {
        public typealias Output = (A.Output, B.Output, C.Output, D.Output)
        public typealias Failure = A.Failure

        /// The first input.
        public let a: A
        /// The second input.
        public let b: B
        /// The third input.
        public let c: C
        /// The fourth input.
        public let d: D

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(_ a: A, _ b: B, _ c: C, _ d: D) {
            self.a = a
            self.b = b
            self.c = c
            self.d = d
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = MultiInputStorage(
                machine: CombineLatestStateMachine<(A.Output?, B.Output?, C.Output?, D.Output?), Output, Failure>(
                    empty: (nil, nil, nil, nil), inputCount: 4, combine: { ($0.0!, $0.1!, $0.2!, $0.3!) }),
                inputCount: 4,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(0, to: a) { replace(&$0.0, with: $1) }
            core.connect(1, to: b) { replace(&$0.1, with: $1) }
            core.connect(2, to: c) { replace(&$0.2, with: $1) }
            core.connect(3, to: d) { replace(&$0.3, with: $1) }
            return SubscriptionToken(core)
        }
    }
}
