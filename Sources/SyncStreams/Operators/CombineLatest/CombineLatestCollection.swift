/// Combines the latest values of any number of streams into arrays, in the order of `streams`.
///
/// Same semantics as `SyncStream.combineLatest(_:)`: emits once every stream has a value, then on every
/// value; finishes when all finished, or at once when one finishes without ever emitting; a failure is
/// forwarded at once and ends the others; nothing is lost while the subscriber is busy; the last array is
/// delivered before the completion. An empty collection emits `[]` once, then finishes (synchronously,
/// during `subscribe`). Delivered on the thread of the input that emitted, as `combineLatest(_:)`.
///
/// ```
/// streams[0]: 1---2-----|
/// streams[1]: -a-----b-|
/// output:     -A--B--C--|       A = [1,a], B = [2,a], C = [2,b]
/// ```
@inlinable
public func combineLatest<S: SyncStream>(_ streams: [S]) -> Streams.CombineLatestCollection<S> {
    Streams.CombineLatestCollection(streams)
}

extension Streams {
    /// The stream returned by `SyncStreams.combineLatest(_:)` on a collection.
    public struct CombineLatestCollection<Upstream: SyncStream>: SyncStream {
        public typealias Output = [Upstream.Output]
        public typealias Failure = Upstream.Failure

        /// The combined streams, in output order.
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
                CallbackScope.delivering {
                    onValue([])
                    onCompletion(.finished)
                }
                return .empty
            }
            let core = MultiInputStorage(
                machine: CombineLatestStateMachine<[Upstream.Output?], Output, Failure>(
                    empty: Array(repeating: nil, count: upstreams.count), inputCount: upstreams.count,
                    combine: { $0.map { $0! } }),
                inputCount: upstreams.count,
                onValue: onValue,
                onCompletion: onCompletion
            )
            for (index, upstream) in upstreams.enumerated() {
                core.connect(index, to: upstream) { replace(&$0[index], with: $1) }
            }
            return SubscriptionToken(core)
        }
    }
}
