/// A subject that holds a current value: subscribers receive it at once, then every later value.
///
/// - `value` reads the latest value sent; setting it is `send(_:)`.
/// - Subscribing delivers the current value at once (during `subscribe`, unless a delivery is in progress
///   on another thread or the call comes from inside a callback of this subject, in which case it is
///   queued and delivered before any later value), then every value sent afterwards, serialized and in
///   order. Repeated values are delivered again; `StateStream` is the variant without repeats.
/// - `send(completion:)` ends the stream; afterwards sends are ignored, `value` stays the last value, and
///   a new subscriber receives only the completion.
///
/// ```
/// CurrentValueSubject(0); send 1; subscribe; send 2; send 2
/// subscriber receives:  1 2 2
/// ```
public final class CurrentValueSubject<Output: Sendable, Failure: Error>: SyncStream, Sendable {
    @usableFromInline let relay: Relay<Output, Failure, Output>

    /// A subject whose current value is `value`.
    @inlinable
    public init(_ value: Output) { relay = Relay(extra: value) }

    /// The latest value sent. Setting it sends the new value (ignored after a completion).
    @inlinable
    public var value: Output {
        get { relay.withExtra { $0 } }
        set { send(newValue) }
    }

    /// Makes `value` the current value and sends it to every subscriber. Ignored after a completion.
    @inlinable
    public func send(_ value: Output) {
        // The value replaced is handed out of the critical section and released after it (releasing a
        // value may run user code, never under the lock).
        let replaced = relay.update { current, delivery -> Output? in
            var conflated: DeliveryEvent<Output, Failure>?  // stays nil: a subject's relay never conflates
            guard delivery.enqueue(value, replaced: &conflated) else { return nil }
            return replace(&current, with: value)
        }
        _ = replaced
    }

    /// Ends the stream for every subscriber. Only the first call counts.
    @inlinable
    public func send(completion: StreamCompletion<Failure>) { relay.send(completion: completion) }

    /// Whether any subscriber is attached (it stops counting at invalidation or completion).
    public var hasSubscribers: Bool { relay.hasSubscribers }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken {
        relay.subscribe(onValue: onValue, onCompletion: onCompletion, initialValue: { $0 })
    }
}
