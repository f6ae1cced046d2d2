extension SyncStream {
    /// Pairs the values of this stream and `other` in order: the first of each, then the second of each, …
    ///
    /// - Each input's values are buffered (without bound) until every input has one; then the oldest of
    ///   each is taken and emitted as one tuple.
    /// - Finishes once an input has finished and its buffered values are used up: at once if it finishes
    ///   with none buffered, otherwise right after the tuple that uses its last one. The other inputs'
    ///   subscriptions end then, and their unused values are dropped.
    /// - A failure of any input is forwarded at once and ends the other inputs.
    /// - Delivery is serialized; values arriving while the subscriber is busy (re-entrantly or from another
    ///   thread) are queued, never lost. Which thread delivers: the thread of the input whose value
    ///   completed the tuple, inline (or a thread already delivering: the tuple is queued).
    /// - `invalidate()` ends every input's subscription; no callback starts after it returns.
    ///
    /// ```
    /// self:   1--2-----3--|
    /// other:  -a---b-c-|
    /// output: -A---B---(C|)      A = (1,a), B = (2,b), C = (3,c): `other` finished and is used up
    /// ```
    public func zip<Other: SyncStream>(_ other: Other) -> Streams.Zip<Self, Other> where Other.Failure == Failure {
        Streams.Zip(self, other)
    }

    /// Pairs the values of this stream and `other` in order and combines each pair with `transform`. See
    /// `zip(_:)`; `transform` runs on the delivering thread, outside any lock.
    public func zip<Other: SyncStream, T: Sendable>(
        _ other: Other,
        _ transform: @escaping @Sendable (Output, Other.Output) -> T
    ) -> Streams.Map<Streams.Zip<Self, Other>, T> where Other.Failure == Failure {
        Streams.Zip(self, other).map { transform($0.0, $0.1) }
    }

    /// Zips three streams into triples. See `zip(_:)`.
    public func zip<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.Zip3<Self, B, C> where B.Failure == Failure, C.Failure == Failure {
        Streams.Zip3(self, b, c)
    }

    /// Zips three streams and combines each triple with `transform`. See `zip(_:)`.
    public func zip<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    ) -> Streams.Map<Streams.Zip3<Self, B, C>, T> where B.Failure == Failure, C.Failure == Failure {
        Streams.Zip3(self, b, c).map { transform($0.0, $0.1, $0.2) }
    }

    /// Zips four streams into quadruples. See `zip(_:)`.
    public func zip<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.Zip4<Self, B, C, D> where B.Failure == Failure, C.Failure == Failure, D.Failure == Failure {
        Streams.Zip4(self, b, c, d)
    }

    /// Zips four streams and combines each quadruple with `transform`. See `zip(_:)`.
    public func zip<B: SyncStream, C: SyncStream, D: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ d: D,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output, D.Output) -> T
    ) -> Streams.Map<Streams.Zip4<Self, B, C, D>, T>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Failure {
        Streams.Zip4(self, b, c, d).map { transform($0.0, $0.1, $0.2, $0.3) }
    }
}

extension Streams {
    /// The stream returned by `zip` on 2 streams: 2-tuples of their values, paired in order.
    public struct Zip<A: SyncStream, B: SyncStream>: SyncStream where A.Failure == B.Failure {
        public typealias Output = (A.Output, B.Output)
        public typealias Failure = A.Failure

        /// Input 1.
        public let a: A
        /// Input 2.
        public let b: B

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            typealias Buffers = (FIFO<A.Output>, FIFO<B.Output>)
            let machine = ZipStateMachine<Buffers, Output, Failure>(
                buffers: (FIFO(), FIFO()),
                inputCount: 2,
                isReady: { !$0.0.isEmpty && !$0.1.isEmpty },
                take: { ($0.0.popFirst()!, $0.1.popFirst()!) },
                isBufferEmpty: { buffers, index in
                    switch index {
                    case 0: return buffers.0.isEmpty
                    case 1: return buffers.1.isEmpty
                    default: return true
                    }
                }
            )
            let storage = MultiInputStorage(
                machine: machine, inputCount: 2, onValue: onValue, onCompletion: onCompletion)
            storage.connect(0, to: a) {
                $0.0.append($1); return nil
            }
            storage.connect(1, to: b) {
                $0.1.append($1); return nil
            }
            return SubscriptionToken(storage)
        }
    }

    /// The stream returned by `zip` on 3 streams: 3-tuples of their values, paired in order.
    public struct Zip3<A: SyncStream, B: SyncStream, C: SyncStream>: SyncStream
    where A.Failure == B.Failure, A.Failure == C.Failure {
        public typealias Output = (A.Output, B.Output, C.Output)
        public typealias Failure = A.Failure

        /// Input 1.
        public let a: A
        /// Input 2.
        public let b: B
        /// Input 3.
        public let c: C

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(_ a: A, _ b: B, _ c: C) {
            self.a = a
            self.b = b
            self.c = c
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            typealias Buffers = (FIFO<A.Output>, FIFO<B.Output>, FIFO<C.Output>)
            let machine = ZipStateMachine<Buffers, Output, Failure>(
                buffers: (FIFO(), FIFO(), FIFO()),
                inputCount: 3,
                isReady: { !$0.0.isEmpty && !$0.1.isEmpty && !$0.2.isEmpty },
                take: { ($0.0.popFirst()!, $0.1.popFirst()!, $0.2.popFirst()!) },
                isBufferEmpty: { buffers, index in
                    switch index {
                    case 0: return buffers.0.isEmpty
                    case 1: return buffers.1.isEmpty
                    case 2: return buffers.2.isEmpty
                    default: return true
                    }
                }
            )
            let storage = MultiInputStorage(
                machine: machine, inputCount: 3, onValue: onValue, onCompletion: onCompletion)
            storage.connect(0, to: a) {
                $0.0.append($1); return nil
            }
            storage.connect(1, to: b) {
                $0.1.append($1); return nil
            }
            storage.connect(2, to: c) {
                $0.2.append($1); return nil
            }
            return SubscriptionToken(storage)
        }
    }

    /// The stream returned by `zip` on 4 streams: 4-tuples of their values, paired in order.
    public struct Zip4<A: SyncStream, B: SyncStream, C: SyncStream, D: SyncStream>: SyncStream
    where A.Failure == B.Failure, A.Failure == C.Failure, A.Failure == D.Failure {
        public typealias Output = (A.Output, B.Output, C.Output, D.Output)
        public typealias Failure = A.Failure

        /// Input 1.
        public let a: A
        /// Input 2.
        public let b: B
        /// Input 3.
        public let c: C
        /// Input 4.
        public let d: D

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(_ a: A, _ b: B, _ c: C, _ d: D) {
            self.a = a
            self.b = b
            self.c = c
            self.d = d
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            typealias Buffers = (FIFO<A.Output>, FIFO<B.Output>, FIFO<C.Output>, FIFO<D.Output>)
            let machine = ZipStateMachine<Buffers, Output, Failure>(
                buffers: (FIFO(), FIFO(), FIFO(), FIFO()),
                inputCount: 4,
                isReady: { !$0.0.isEmpty && !$0.1.isEmpty && !$0.2.isEmpty && !$0.3.isEmpty },
                take: { ($0.0.popFirst()!, $0.1.popFirst()!, $0.2.popFirst()!, $0.3.popFirst()!) },
                isBufferEmpty: { buffers, index in
                    switch index {
                    case 0: return buffers.0.isEmpty
                    case 1: return buffers.1.isEmpty
                    case 2: return buffers.2.isEmpty
                    case 3: return buffers.3.isEmpty
                    default: return true
                    }
                }
            )
            let storage = MultiInputStorage(
                machine: machine, inputCount: 4, onValue: onValue, onCompletion: onCompletion)
            storage.connect(0, to: a) {
                $0.0.append($1); return nil
            }
            storage.connect(1, to: b) {
                $0.1.append($1); return nil
            }
            storage.connect(2, to: c) {
                $0.2.append($1); return nil
            }
            storage.connect(3, to: d) {
                $0.3.append($1); return nil
            }
            return SubscriptionToken(storage)
        }
    }
}
