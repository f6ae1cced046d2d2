/// Mutable per-subscription state of an operator that only its upstream's callbacks touch.
///
/// `@unchecked Sendable` is sound because of the stream contract: events to one subscriber are serialized,
/// and consecutive callbacks are ordered by the upstream's lock hand-over (happens-before), so `value` is
/// never accessed by two threads at once. Only use it for state read and written inside those callbacks.
@usableFromInline
final class SerialBox<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}

/// Holds an upstream subscription's token for an operator that may need to end it early — possibly
/// before `subscribe` has returned the token (a value delivered during `subscribe` can complete a
/// `prefix(1)`).
///
/// As the token target returned to the downstream subscriber, it ends the upstream subscription when
/// invalidated.
@usableFromInline
final class UpstreamLink: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: all state is inside `state`, a `Locked`.
    @usableFromInline let state = Locked<(token: SubscriptionToken?, isCancelled: Bool)>((nil, false))
    /// Runs once when the link is cancelled by its downstream (not when the operator ends it itself).
    @usableFromInline let onDownstreamCancel: (@Sendable () -> Void)?

    @inlinable
    init(onDownstreamCancel: (@Sendable () -> Void)? = nil) { self.onDownstreamCancel = onDownstreamCancel }

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

    /// Ends the upstream subscription without waiting: the operator itself ignores whatever still arrives.
    @inlinable
    func end() { take()?.invalidate(waiting: false) }

    @inlinable
    func take() -> SubscriptionToken? {
        state.withLock { state -> SubscriptionToken? in
            state.isCancelled = true
            let token = state.token
            state.token = nil
            return token
        }
    }

    @usableFromInline
    override func cancel(waiting: Bool) {
        let token = take()
        onDownstreamCancel?()
        token?.invalidate(waiting: waiting)
    }
}
