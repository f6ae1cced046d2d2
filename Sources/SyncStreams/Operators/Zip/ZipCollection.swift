/// Pairs the values of any number of streams in order, as arrays in the order of `streams`.
///
/// Same semantics as `SyncStream.zip(_:)`: each array holds the oldest unused value of every stream;
/// finishes once a stream has finished and its values are used up; a failure is forwarded at once and
/// ends the others. An empty collection emits `[]` once, then finishes — as `combineLatest([])` does (the
/// pinned design), so the two collection forms agree.
///
/// ```
/// streams[0]: 1--2--|
/// streams[1]: -a--b----c|
/// output:     -A--B-|         A = [1,a], B = [2,b]
/// ```
public func zip<S: SyncStream>(_ streams: [S]) -> Streams.ZipCollection<S> { Streams.ZipCollection(streams) }

extension Streams {
    /// The stream returned by `SyncStreams.zip(_:)` on a collection.
    public struct ZipCollection<Upstream: SyncStream>: SyncStream {
        public typealias Output = [Upstream.Output]
        public typealias Failure = Upstream.Failure

        /// The zipped streams, in output order.
        public let upstreams: [Upstream]

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(_ upstreams: [Upstream]) { self.upstreams = upstreams }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            guard !upstreams.isEmpty else {
                CallbackScope.delivering {
                    onValue([])
                    onCompletion(.finished)
                }
                return .empty
            }
            let machine = ZipStateMachine<[FIFO<Upstream.Output>], Output, Failure>(
                buffers: Array(repeating: FIFO(), count: upstreams.count),
                inputCount: upstreams.count,
                isReady: { buffers in buffers.allSatisfy { !$0.isEmpty } },
                take: { buffers in buffers.indices.map { buffers[$0].popFirst()! } },
                isBufferEmpty: { buffers, index in buffers[index].isEmpty }
            )
            let storage = MultiInputStorage(
                machine: machine, inputCount: upstreams.count, onValue: onValue, onCompletion: onCompletion)
            for (index, upstream) in upstreams.enumerated() {
                storage.connect(index, to: upstream) {
                    $0[index].append($1)
                    return nil
                }
            }
            return SubscriptionToken(storage)
        }
    }
}
