extension SyncStream where Output: SyncStream, Output.Failure == Failure {
    /// Flattens a stream of streams by following only the latest inner stream.
    ///
    /// - Each new inner stream replaces the previous one: the previous subscription ends at once, and any
    ///   value it still delivers is dropped.
    /// - Finishes when the outer stream finished and the current inner stream (if any) finished.
    /// - A failure of the outer or the current inner stream is forwarded at once and ends the rest.
    /// - Delivery is serialized.
    ///
    /// ```
    /// outer:   A - - - B - - |
    /// A:       - 1 2 - - 3 |          (3 is dropped: B replaced A)
    /// B:       - - - - - - 4 - 5 |
    /// output:  - 1 2 - - - 4 - 5 |
    /// ```
    /// Example: total progress over a user's changing set of sessions.
    public func switchToLatest() -> Streams.SwitchToLatest<Self> { Streams.SwitchToLatest(upstream: self) }
}

extension SyncStream {
    /// Maps each value to a stream and follows only the latest one: `map(transform).switchToLatest()`.
    public func flatMapLatest<Inner: SyncStream>(
        _ transform: @escaping @Sendable (Output) -> Inner
    ) -> Streams.SwitchToLatest<Streams.Map<Self, Inner>> where Inner.Failure == Failure {
        map(transform).switchToLatest()
    }
}

extension Streams {
    /// The stream returned by `switchToLatest()` and `flatMapLatest(_:)`.
    public struct SwitchToLatest<Upstream: SyncStream>: SyncStream
    where Upstream.Output: SyncStream, Upstream.Output.Failure == Upstream.Failure {
        public typealias Output = Upstream.Output.Output
        public typealias Failure = Upstream.Failure

        /// The stream of streams.
        public let upstream: Upstream

        /// Creates the stream; usually reached through the operator method, which documents the semantics.
        public init(upstream: Upstream) { self.upstream = upstream }

        public func subscribe(
            onValue: @escaping @Sendable (Output) -> Void,
            onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken {
            let core = SwitchToLatestCore<Upstream.Output>(onValue: onValue, onCompletion: onCompletion)
            core.connect(to: upstream)
            return SubscriptionToken(core)
        }
    }
}

/// The state behind `switchToLatest`: which inner stream is current, and what has finished.
final class SwitchToLatestCore<Inner: SyncStream>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: mutable state is the relay's `Extra`, guarded by its lock; `outerLink` is
    // thread-safe; `subscriber` is written once in `init`.
    typealias Output = Inner.Output
    typealias Failure = Inner.Failure

    struct State {
        var innerIndex = 0
        var innerLink: UpstreamLink?
        var isInnerActive = false
        var isOuterFinished = false
        var isTerminated = false
    }

    private let relay: Relay<Output, Failure, State>
    private let outerLink = UpstreamLink()
    private var subscriber: Subscriber<Output, Failure>!

    init(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        relay = Relay(extra: State())
        super.init()
        subscriber = relay.attach(onValue: onValue, onCompletion: onCompletion)
    }

    func connect<Outer: SyncStream>(to outer: Outer) where Outer.Output == Inner, Outer.Failure == Failure {
        let token = outer.subscribe(
            onValue: { inner in self.switchTo(inner) },
            onCompletion: { completion in
                let previous = self.relay.update { state, delivery -> UpstreamLink? in
                    guard !state.isTerminated else { return nil }
                    state.isOuterFinished = true
                    switch completion {
                    case .finished:
                        guard !state.isInnerActive else { return nil }
                    case .failure:
                        break
                    }
                    state.isTerminated = true
                    delivery.enqueue(completion: completion)
                    return state.innerLink.take()
                }
                previous?.end()
            }
        )
        outerLink.attach(token)
    }

    private func switchTo(_ inner: Inner) {
        let link = UpstreamLink()
        let (index, previous) = relay.withExtra { state -> (Int?, UpstreamLink?) in
            guard !state.isTerminated else { return (nil, nil) }
            state.innerIndex += 1
            state.isInnerActive = true
            let previous = state.innerLink
            state.innerLink = link
            return (state.innerIndex, previous)
        }
        previous?.end()
        guard let index else { return }
        let token = inner.subscribe(
            onValue: { value in
                self.relay.update { state, delivery in
                    guard state.innerIndex == index, !state.isTerminated else { return }
                    delivery.enqueue(value)
                }
            },
            onCompletion: { completion in
                let ended = self.relay.update { state, delivery -> Bool in
                    guard state.innerIndex == index, !state.isTerminated else { return false }
                    state.isInnerActive = false
                    state.innerLink = nil
                    if case .finished = completion, !state.isOuterFinished { return false }
                    state.isTerminated = true
                    delivery.enqueue(completion: completion)
                    return true
                }
                if ended { self.outerLink.end() }
            }
        )
        link.attach(token)
    }

    override func cancel(waiting: Bool) {
        relay.remove(subscriber, waiting: waiting)
        let inner = relay.withExtra { state -> UpstreamLink? in
            state.isTerminated = true
            return state.innerLink.take()
        }
        outerLink.end()
        inner?.end()
    }
}
