/// A stream that emits one value, then finishes: `Just(5)`.
///
/// Each subscription receives `output` and then `.finished`, synchronously, on the subscribing thread,
/// during `subscribe` — before `subscribe` returns. It cannot fail (`Failure` is `Never`; use
/// `setFailureType(to:)`, or let `combineLatest`/`merge(with:)` do it, to combine it with a stream that
/// can). The returned token is already invalidated and nothing of the subscriber is kept, so there is
/// nothing to cancel; an operator that ends it early (`prefix(1)`, `switchToLatest`) ignores the
/// `.finished` that follows.
///
/// ```
/// Just(1):  (1|)
/// ```
public struct Just<Output: Sendable>: SyncStream {
    public typealias Failure = Never

    /// The value each subscriber receives.
    public let output: Output

    /// A stream that emits `output` once to each subscriber, then finishes.
    @inlinable
    public init(_ output: Output) { self.output = output }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Never>) -> Void
    ) -> SubscriptionToken {
        CallbackScope.delivering {
            onValue(output)
            onCompletion(.finished)
        }
        return .empty
    }
}

extension Just: Equatable where Output: Equatable {}
