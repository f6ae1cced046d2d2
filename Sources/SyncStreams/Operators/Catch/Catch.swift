extension SyncStream {
    /// On failure, continues with the stream `handler` returns for the error, as Combine's `catch`.
    ///
    /// - Values and `.finished` of the upstream pass through.
    /// - On an upstream failure, `handler(error)` is called and its stream is subscribed to; from then on
    ///   its values and completion (including its own failure) pass through.
    /// - `handler` runs on the thread that delivered the failure, outside any lock.
    /// - Delivery is serialized and in order, on the thread of the stream that emitted (inline);
    ///   `invalidate()` ends whichever subscription is current without waiting on it, and no callback
    ///   starts after it returns.
    ///
    /// ```
    /// upstream:              a b #
    /// handler's stream:            x y |
    /// catch { _ in … }:      a b   x y |
    /// ```
    public func `catch`<Replacement: SyncStream>(
        _ handler: @escaping @Sendable (Failure) -> Replacement
    ) -> Streams.Catch<Self, Replacement> where Replacement.Output == Output {
        Streams.Catch(upstream: self, handler: handler)
    }
}

extension Streams {
    /// The stream returned by `SyncStream.catch(_:)`.
    public struct Catch<Upstream: SyncStream, Replacement: SyncStream>: SyncStream
    where Replacement.Output == Upstream.Output {
        public typealias Output = Upstream.Output
        public typealias Failure = Replacement.Failure

        /// The stream whose failure is caught.
        public let upstream: Upstream
        /// Makes the stream to continue with after a failure.
        public let handler: @Sendable (Upstream.Failure) -> Replacement

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream, handler: @escaping @Sendable (Upstream.Failure) -> Replacement) {
            self.upstream = upstream
            self.handler = handler
        }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let storage = CatchStorage<Upstream, Replacement>(
                handler: handler, onValue: onValue, onCompletion: onCompletion)
            storage.connect(to: upstream)
            return SubscriptionToken(storage)
        }
    }
}
