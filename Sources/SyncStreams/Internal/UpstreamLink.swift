/// Holds an upstream subscription's token for an operator that may need to end it early — possibly
/// before `subscribe` has returned the token (a value delivered during `subscribe` can complete a
/// `prefix(1)`).
///
/// As the token target returned to the downstream subscriber, it ends the upstream subscription when
/// invalidated.
@usableFromInline
final class UpstreamLink: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: all state is inside `state`, a `Locked`.
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var token: SubscriptionToken?
        @usableFromInline var isCancelled = false
        /// Runs once when the downstream cancels (not when the operator ends the upstream itself).
        @usableFromInline var onDownstreamCancel: (@Sendable () -> Void)?

        @inlinable
        init(onDownstreamCancel: (@Sendable () -> Void)?) { self.onDownstreamCancel = onDownstreamCancel }
    }

    @usableFromInline let state: Locked<State>

    @inlinable
    init(onDownstreamCancel: (@Sendable () -> Void)? = nil) {
        state = Locked(State(onDownstreamCancel: onDownstreamCancel))
    }

    /// Stores the upstream token; ends it at once if the link was already cancelled.
    @inlinable
    func attach(_ token: SubscriptionToken) {
        let cancelled = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.token = token
            return false
        }
        if cancelled { token.invalidate(waiting: false) }
    }

    /// Whether the downstream cancelled or the operator ended the upstream subscription.
    @inlinable
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Drops the downstream-cancel handler (after a completion: a later invalidate is not a cancel), so
    /// what it captured is released.
    @inlinable
    func discardCancelHandler() { _ = state.withLock { $0.onDownstreamCancel.take() } }

    /// Ends the upstream subscription without waiting: the operator itself ignores whatever still arrives.
    @inlinable
    func end() { take().token?.invalidate(waiting: false) }

    @inlinable
    func take() -> (token: SubscriptionToken?, onDownstreamCancel: (@Sendable () -> Void)?) {
        state.withLock { state in
            state.isCancelled = true
            return (state.token.take(), state.onDownstreamCancel.take())
        }
    }

    @usableFromInline
    override func cancel(waiting: Bool) {
        let (token, onDownstreamCancel) = take()
        onDownstreamCancel?()
        token?.invalidate(waiting: waiting)
    }
}
