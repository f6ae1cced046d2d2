import Synchronization

extension SyncStream {
    /// On failure, continues with the stream `handler` returns for the error, as Combine's `catch`.
    ///
    /// - Values and `.finished` of the upstream pass through.
    /// - On an upstream failure, `handler(error)` is called and its stream is subscribed to; from then on
    ///   its values and completion (including its own failure) pass through.
    /// - Delivery is serialized and in order; `invalidate()` ends whichever subscription is current, and
    ///   no callback starts after it returns.
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
            let core = CatchCore()
            let handler = self.handler
            let token = upstream.subscribe(
                onValue: onValue,
                onCompletion: { completion in
                    switch completion {
                    case .finished:
                        onCompletion(.finished)
                    case .failure(let error):
                        guard core.beginReplacement() else { return }
                        // The gate drops what a replacement emits synchronously, during its `subscribe`, after
                        // the subscriber invalidated re-entrantly (its token is not attached yet).
                        let replacement = handler(error).subscribe(
                            onValue: { value in if !core.isCancelled { onValue(value) } },
                            onCompletion: { completion in if !core.isCancelled { onCompletion(completion) } }
                        )
                        core.attachReplacement(replacement)
                    }
                }
            )
            core.attachUpstream(token)
            return SubscriptionToken(core)
        }
    }
}

/// The subscriptions behind one `catch`: the upstream's, then the replacement's.
///
/// While the replacement is being subscribed (inside the upstream's failure callback), the upstream token
/// stays current: an `invalidate()` from another thread then waits on it for that callback to return, by
/// which time the replacement token is attached (and invalidated, waiting, since the link is cancelled).
/// That keeps "no callback starts after `invalidate()` returns" without a lock on the value path.
final class CatchCore: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: all state is inside `state`, a `Locked`, or the atomic `cancelled`.
    private enum Phase {
        case upstream
        case switching
        case replacement
        case cancelled
    }

    private let state = Locked<(phase: Phase, token: SubscriptionToken?)>((.upstream, nil))
    private let cancelled = Atomic<Bool>(false)

    /// Whether the downstream invalidated (read without the lock on the replacement's value path).
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    override init() {}

    /// Stores the upstream token, unless the replacement is already attached or the link was cancelled.
    ///
    /// While switching (the upstream failed on another thread before its `subscribe` returned), the token
    /// is kept so that a concurrent `cancel` waits on it; `attachReplacement` then ends it.
    func attachUpstream(_ token: SubscriptionToken) {
        let keep = state.withLock { state -> Bool in
            switch state.phase {
            case .upstream, .switching:
                state.token = token
                return true
            case .replacement, .cancelled:
                return false
            }
        }
        if !keep { token.invalidate(waiting: false) }
    }

    /// The upstream failed: whether to subscribe to the replacement (not after cancellation).
    func beginReplacement() -> Bool {
        state.withLock { state -> Bool in
            guard case .upstream = state.phase else { return false }
            state.phase = .switching
            return true
        }
    }

    func attachReplacement(_ token: SubscriptionToken) {
        let (keep, upstream) = state.withLock { state -> (Bool, SubscriptionToken?) in
            guard case .switching = state.phase else { return (false, nil) }
            state.phase = .replacement
            let upstream = state.token
            state.token = token
            return (true, upstream)
        }
        // The upstream has failed: ending its subscription only releases it.
        upstream?.invalidate(waiting: false)
        if !keep { token.invalidate(waiting: true) }
    }

    override func cancel(waiting: Bool) {
        cancelled.store(true, ordering: .releasing)
        let token = state.withLock { state -> SubscriptionToken? in
            state.phase = .cancelled
            let token = state.token
            state.token = nil
            return token
        }
        token?.invalidate(waiting: waiting)
    }
}
