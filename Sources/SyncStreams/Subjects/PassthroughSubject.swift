/// A stream you push values into; subscribers receive the values sent after they subscribed.
///
/// - `send(_:)` may be called from any thread, and from inside a subscriber's callback. Each subscriber
///   receives every value sent after its `subscribe` returned (and none sent before), serialized and in
///   send order. A send that arrives while another thread is delivering is queued, not blocked, and
///   delivered by that thread; a send from inside a callback is delivered after the current value has
///   reached every subscriber (breadth-first, so all subscribers see the same order).
/// - `send(completion:)` ends the stream: every subscriber receives it after the values sent before it;
///   later sends are ignored; a later subscriber receives only the completion.
/// - Fan-out never holds a lock while calling subscribers.
///
/// ```
/// send:        1   2       3   |
/// subscriber:  ^-- subscribed   (after 1)
/// receives:        2       3   |
/// ```
public final class PassthroughSubject<Output: Sendable, Failure: Error>: SyncStream, Sendable {
    @usableFromInline let relay: Relay<Output, Failure, Void>

    /// A subject with no subscribers.
    @inlinable
    public init() { relay = Relay(extra: ()) }

    /// Sends a value to every current subscriber. Ignored after a completion.
    @inlinable
    public func send(_ value: Output) { relay.send(value) }

    /// Ends the stream for every subscriber, after the values already sent. Only the first call counts.
    @inlinable
    public func send(completion: StreamCompletion<Failure>) { relay.send(completion: completion) }

    /// Whether any subscriber is attached (it stops counting at invalidation or completion).
    public var hasSubscribers: Bool { relay.hasSubscribers }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken {
        relay.subscribe(onValue: onValue, onCompletion: onCompletion)
    }
}

extension PassthroughSubject where Output == Void {
    /// Sends `()`.
    @inlinable
    public func send() { send(()) }
}
