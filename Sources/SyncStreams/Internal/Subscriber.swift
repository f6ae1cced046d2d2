import Synchronization

/// Something that can detach a subscriber: a relay.
@usableFromInline
protocol SubscriberOwner<Output, Failure>: AnyObject, Sendable {
    associatedtype Output: Sendable
    associatedtype Failure: Error
    func remove(_ subscriber: Subscriber<Output, Failure>, waiting: Bool)
}

/// One attached subscriber: its callbacks and whether it has been cancelled.
///
/// Only the thread that currently drains its relay calls `receive`; see `Relay` for why that makes the
/// unsynchronised closure properties safe.
@usableFromInline
final class Subscriber<Output: Sendable, Failure: Error>: Cancellation, @unchecked Sendable {
    // @unchecked Sendable: `onValue`/`onCompletion` are read only by the relay's current drainer (one
    // thread at a time, handed over under the relay's lock) and written only by that drainer, after it
    // delivered the completion. `generation` is written once under the relay's lock before the subscriber
    // is published. `isCancelled` is atomic.
    @usableFromInline var onValue: @Sendable (Output) -> Void
    @usableFromInline var onCompletion: @Sendable (StreamCompletion<Failure>) -> Void
    @usableFromInline var generation: UInt64 = 0
    @usableFromInline let isCancelled = Atomic<Bool>(false)
    @usableFromInline let owner: any SubscriberOwner<Output, Failure>

    @inlinable
    init(
        owner: any SubscriberOwner<Output, Failure>,
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

    /// Delivers the completion, then drops the callbacks so what they captured is released.
    @inlinable
    func receive(completion: StreamCompletion<Failure>) {
        guard !isCancelled.exchange(true, ordering: .relaxed) else { return }
        let onCompletion = self.onCompletion
        onValue = { _ in }
        self.onCompletion = { _ in }
        onCompletion(completion)
    }

    @usableFromInline
    override func cancel(waiting: Bool) { owner.remove(self, waiting: waiting) }
}
