import Synchronization

/// What a `SubscriptionToken` ends when it is invalidated.
///
/// Internal base class: each stream or operator subclasses it with the work that ends its subscription.
/// `waiting` tells whether the caller is a user's `invalidate()` (which must not return while a callback of
/// the subscription runs on another thread) or an operator cancelling its upstream (which never waits, and
/// instead ignores whatever still arrives).
@usableFromInline
class Cancellation: @unchecked Sendable {
    // @unchecked Sendable: the base class has no state; each subclass documents why it is safe.
    @inlinable init() {}

    @usableFromInline
    func cancel(waiting: Bool) {}
}

/// A `Cancellation` that runs a closure once.
@usableFromInline
final class ClosureCancellation: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: `action` is immutable and `@Sendable`.
    @usableFromInline let action: @Sendable () -> Void

    @inlinable
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    @usableFromInline
    override func cancel(waiting: Bool) { action() }
}

/// Keeps a subscription alive; invalidating it, or releasing its last reference, ends the subscription.
///
/// When `invalidate()` blocks, and which form to use:
/// - **From outside any stream callback** (the common case), `invalidate()` stops the deliveries and, if
///   *this* subscription's callback is running on another thread at that moment, waits for it to return —
///   only for that one callback, never for other subscribers' callbacks. When it returns, no callback of
///   the subscription starts any more, so whatever the callbacks use may be torn down safely.
/// - **From inside any stream callback** (of this subscription or another), `invalidate()` never waits for
///   another thread: it stops future deliveries and returns at once. A callback of this subscription that
///   another thread has already started may still run to its end. (Two callbacks on two threads that
///   invalidate each other's subscriptions would otherwise wait for each other.)
/// - **`invalidate(waiting: false)`** never waits, from anywhere: use it where blocking is not allowed — on
///   an actor, on the main thread while a callback may be waiting for it — and tolerate one callback in
///   flight.
/// - **Releasing the last reference** (the token's `deinit`) is `invalidate()`: it may wait as described,
///   on the thread that drops the reference.
///
/// Also:
/// - Invalidation is idempotent and thread-safe; everything the subscription captured (closures, upstream
///   subscriptions, timers) is released by it.
/// - Tokens are `Hashable` by identity, so they can be kept in a `Set` with `store(in:)`.
public final class SubscriptionToken: Hashable, Sendable {
    @usableFromInline let target: Atomic<Unmanaged<Cancellation>?>

    @inlinable
    init(_ cancellation: Cancellation) {
        target = Atomic(Unmanaged.passRetained(cancellation))
    }

    /// A token that runs `onInvalidate` once, the first time it is invalidated or released.
    ///
    /// Use it to write a custom stream: return it from `subscribe(onValue:onCompletion:)` with the work
    /// that stops your source.
    public convenience init(onInvalidate: @escaping @Sendable () -> Void) {
        self.init(ClosureCancellation(onInvalidate))
    }

    /// A token that is already invalidated.
    public static var empty: SubscriptionToken {
        let token = SubscriptionToken(Cancellation())
        token.invalidate()
        return token
    }

    deinit { invalidate(waiting: true) }

    /// Ends the subscription. Idempotent. From outside any stream callback, no callback of the
    /// subscription starts after this returns (it waits for this subscription's callback if one is
    /// running on another thread); from inside a callback it never waits. See the type's documentation.
    public func invalidate() { invalidate(waiting: true) }

    /// Whether `invalidate()` has been called (or the token was created invalid).
    public var isInvalidated: Bool { target.load(ordering: .acquiring) == nil }

    /// Ends the subscription; with `waiting: false` it never blocks: future deliveries stop at once, and a
    /// callback already started on another thread may still run to its end. `invalidate(waiting: true)`
    /// is `invalidate()`.
    @inlinable
    public func invalidate(waiting: Bool) {
        // A plain load first: an already invalidated token (the common case at deinit) costs no
        // read-modify-write.
        guard target.load(ordering: .relaxed) != nil,
            let cancellation = target.exchange(nil, ordering: .acquiringAndReleasing)
        else { return }
        cancellation.takeRetainedValue().cancel(waiting: waiting)
    }

    /// Keeps this token in `set` until the set drops it.
    public func store(in set: inout Set<SubscriptionToken>) { set.insert(self) }

    /// Keeps this token in `array` until the array drops it.
    public func store(in array: inout [SubscriptionToken]) { array.append(self) }

    public static func == (lhs: SubscriptionToken, rhs: SubscriptionToken) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
