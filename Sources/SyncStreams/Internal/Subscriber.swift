import Synchronization

/// How a subscriber reaches back into its relay: two functions made where the relay's concrete type is
/// known (inside its `@inlinable` code), so a client module calls its specialized versions.
///
/// A protocol existential (or a class method) would run the relay's generic code unspecialized, paying a
/// metadata lookup per call; that dominated the cost of a subscribe/invalidate cycle.
@usableFromInline
struct SubscriberOwner<Output: Sendable, Failure: Error>: Sendable {
    @usableFromInline let object: AnyObject & Sendable
    /// Called with the subscriber (which holds this owner, so the object is reached without a retain).
    @usableFromInline let remove: @Sendable (Subscriber<Output, Failure>, Bool) -> Void
    @usableFromInline let didComplete: @Sendable (Subscriber<Output, Failure>) -> Void

    @inlinable
    init(
        object: AnyObject & Sendable,
        remove: @escaping @Sendable (Subscriber<Output, Failure>, Bool) -> Void,
        didComplete: @escaping @Sendable (Subscriber<Output, Failure>) -> Void
    ) {
        self.object = object
        self.remove = remove
        self.didComplete = didComplete
    }
}

/// One attached subscriber: its callbacks and whether it has been cancelled.
///
/// Only the thread that currently drains its relay calls `receive`; see `Relay` for why that makes the
/// unsynchronised closure properties safe.
@usableFromInline
final class Subscriber<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: `generation` is written once under the relay's lock before the subscriber is
    // published, and read afterwards only; `isCancelled` is atomic; the rest is immutable.
    //
    // The callbacks are `let`: calling a `let` closure of a borrowed object needs no retain, which is a
    // large share of the cost of a delivery. They are released with the subscriber, i.e. when its token
    // is invalidated or released and the relay has detached it (at invalidation or completion).
    @usableFromInline let onValue: @Sendable (Output) -> Void
    @usableFromInline let onCompletion: @Sendable (StreamCompletion<Failure>) -> Void
    @exclusivity(unchecked) @usableFromInline var generation: UInt64 = 0
    @usableFromInline let isCancelled = Atomic<Bool>(false)
    @usableFromInline let owner: SubscriberOwner<Output, Failure>
    /// The token whose target this subscriber is, if any (not retained). Read and written only under the
    /// owner's lock; the token's deinit detaches the subscriber under that lock before the token is freed,
    /// so a non-nil value always points to a live token. Lets completion release the callbacks even while
    /// the user keeps the token.
    @exclusivity(unchecked) @usableFromInline var token: Unmanaged<SubscriptionToken>?

    @inlinable
    init(
        owner: SubscriberOwner<Output, Failure>,
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) {
        self.owner = owner
        self.onValue = onValue
        self.onCompletion = onCompletion
    }

    @inlinable @inline(__always)
    func receive(_ value: Output) {
        if !isCancelled.load(ordering: .relaxed) { onValue(value) }
    }

    @inlinable
    func markCancelled() { isCancelled.store(true, ordering: .relaxed) }

    /// Delivers the completion; nothing is delivered to this subscriber afterwards.
    @inlinable
    func receive(completion: StreamCompletion<Failure>) {
        guard !isCancelled.exchange(true, ordering: .relaxed) else { return }
        onCompletion(completion)
        owner.didComplete(self)
    }

    @inlinable
    override func cancel(waiting: Bool) { owner.remove(self, waiting) }
}
