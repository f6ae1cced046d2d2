extension SyncStream {
    /// Emits the values of this stream and of `others` as they arrive.
    ///
    /// - Values are delivered serialized, in the order they arrived at the merge; nothing is lost while
    ///   the subscriber is busy.
    /// - Finishes when every input finished.
    /// - The first failure is forwarded at once and ends the other inputs' subscriptions.
    /// - Which thread delivers: the thread of the input that emitted, inline — or, when another thread is
    ///   already delivering, that thread (the value is queued); a drain that other threads keep busy hands
    ///   the rest to a global queue after a bounded number of their values.
    /// - `invalidate()` ends every input's subscription; no callback starts after it returns.
    ///
    /// ```
    /// self:   1 - 3 - |
    /// other:  - 2 - - - 4 |
    /// output: 1 2 3 - - 4 |
    /// ```
    @inlinable
    public func merge<Other: SyncStream>(
        with others: Other...
    ) -> Streams.Merge<Self, Other> where Other.Output == Output, Other.Failure == Failure {
        Streams.Merge(self, others)
    }
}

/// Emits the values of all `streams` as they arrive; finishes when all finished; the first failure is
/// forwarded at once and ends the others. An empty collection finishes at once. See
/// `SyncStream.merge(with:)`.
@inlinable
public func merge<S: SyncStream>(_ streams: [S]) -> Streams.MergeCollection<S> {
    Streams.MergeCollection(streams)
}

extension Streams {
    /// The stream returned by `SyncStream.merge(with:)`.
    public struct Merge<Upstream: SyncStream, Other: SyncStream>: SyncStream
    where Upstream.Output == Other.Output, Upstream.Failure == Other.Failure {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The first input.
        public let upstream: Upstream
        /// The other inputs.
        public let others: [Other]

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(_ upstream: Upstream, _ others: [Other]) {
            self.upstream = upstream
            self.others = others
        }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = MultiInputStorage(
                machine: MergeStateMachine<Output, Failure>(inputCount: 1 + others.count),
                inputCount: 1 + others.count,
                onValue: onValue,
                onCompletion: onCompletion
            )
            core.connect(0, to: upstream, store: mergeStore)
            for (index, other) in others.enumerated() { core.connect(index + 1, to: other, store: mergeStore) }
            return SubscriptionToken(core)
        }
    }

    /// The stream returned by `SyncStreams.merge(_:)` on a collection (named like
    /// `CombineLatestCollection` and `ZipCollection`).
    public struct MergeCollection<Upstream: SyncStream>: SyncStream {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The inputs, in order.
        public let upstreams: [Upstream]

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        @inlinable
        public init(_ upstreams: [Upstream]) { self.upstreams = upstreams }

        @inlinable
        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            guard !upstreams.isEmpty else {
                CallbackScope.delivering { onCompletion(.finished) }
                return .empty
            }
            let core = MultiInputStorage(
                machine: MergeStateMachine<Output, Failure>(inputCount: upstreams.count),
                inputCount: upstreams.count,
                onValue: onValue,
                onCompletion: onCompletion
            )
            for (index, upstream) in upstreams.enumerated() { core.connect(index, to: upstream, store: mergeStore) }
            return SubscriptionToken(core)
        }
    }
}

extension Streams {
    /// The former name of `MergeCollection`.
    @available(*, deprecated, renamed: "MergeCollection")
    public typealias MergeMany<Upstream: SyncStream> = MergeCollection<Upstream>
}

/// What `merge`'s storage writes for an input's value: the value into the machine's one slot (nothing is
/// displaced: the slot is emptied after every value).
@inlinable
func mergeStore<Value>(_ slot: inout Value?, _ value: Value) -> Value? {
    slot = value
    return nil
}
