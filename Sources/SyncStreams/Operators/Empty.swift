/// A stream that emits no value: it finishes at once, or — `Empty(completeImmediately: false)` — never.
///
/// - `Empty<Int, Never>()`: each subscription receives `.finished` synchronously, on the subscribing
///   thread, during `subscribe`; the returned token is already invalidated.
/// - `Empty<Int, Never>(completeImmediately: false)`: nothing is ever delivered, the subscriber's closures
///   are not kept, and the token only records its invalidation.
///
/// It never fails, whatever its `Failure` type says.
///
/// ```
/// Empty():                          |
/// Empty(completeImmediately: false): ----…
/// ```
public struct Empty<Output: Sendable, Failure: Error>: SyncStream, Equatable {
    /// Whether a subscriber receives `.finished` at once (`true`) or nothing, ever (`false`).
    public let completeImmediately: Bool

    /// A stream that finishes at once without a value (or, if `completeImmediately` is false, never
    /// delivers anything).
    @inlinable
    public init(completeImmediately: Bool = true) { self.completeImmediately = completeImmediately }

    /// An empty stream of the given types; see `init(completeImmediately:)`.
    @inlinable
    public init(completeImmediately: Bool = true, outputType: Output.Type, failureType: Failure.Type) {
        self.completeImmediately = completeImmediately
    }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken {
        guard completeImmediately else { return SubscriptionToken(onInvalidate: {}) }
        CallbackScope.delivering { onCompletion(.finished) }
        return .empty
    }
}
