/// A stream of values over time, ending with at most one completion.
///
/// The contract every stream and operator in this module keeps, and every custom conformance must keep:
/// - Events to one subscriber are serialized (never concurrent) and in order; after a completion nothing
///   more is delivered.
/// - No callback starts after the subscription's `SubscriptionToken.invalidate()` returns (when called from
///   outside any stream callback; from inside one it never waits for another thread — see
///   `SubscriptionToken`).
/// - Re-entrancy is safe: a callback may send into a subject, subscribe, or invalidate, without deadlock,
///   crash or lost values. Streams never call out while holding a lock.
/// - Values may be sent from any thread.
/// - Invalidation releases everything the subscription captured.
///
/// Subscribing is the only requirement; operators are extensions on this protocol.
public protocol SyncStream<Output, Failure>: Sendable {
    /// The type of values the stream emits.
    associatedtype Output: Sendable
    /// The type of error the stream may fail with; `Never` for a stream that cannot fail.
    associatedtype Failure: Error

    /// Attaches a subscriber and returns the token that keeps it attached.
    ///
    /// - Parameters:
    ///   - onValue: Called with each value, serialized and in order.
    ///   - onCompletion: Called at most once, after the last value.
    /// - Returns: The subscription's token. Invalidating it, or releasing its last reference, ends the
    ///   subscription: no callback starts after `invalidate()` returns.
    func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken
}

extension SyncStream where Failure == Never {
    /// Attaches a subscriber that receives every value of a stream that cannot fail.
    ///
    /// - Parameter onValue: Called with each value, serialized and in order.
    /// - Returns: The subscription's token; keep it as long as you want values.
    @inlinable
    public func subscribe(_ onValue: @escaping @Sendable (Output) -> Void) -> SubscriptionToken {
        subscribe(onValue: onValue, onCompletion: { _ in })
    }
}
