/// A stream that fails at once with `error`, without a value: `Fail<Int, MyError>(error: .denied)`.
///
/// Each subscription receives `.failure(error)` synchronously, on the subscribing thread, during
/// `subscribe` — before `subscribe` returns. The returned token is already invalidated and nothing of the
/// subscriber is kept.
///
/// ```
/// Fail(error: e):  #
/// ```
public struct Fail<Output: Sendable, Failure: Error>: SyncStream {
    /// The error each subscriber receives.
    public let error: Failure

    /// A stream that fails with `error` as soon as it is subscribed to.
    @inlinable
    public init(error: Failure) { self.error = error }

    /// A stream of `outputType` values that fails with `failure`; see `init(error:)`.
    @inlinable
    public init(outputType: Output.Type, failure: Failure) { self.error = failure }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken {
        CallbackScope.delivering { onCompletion(.failure(error)) }
        return .empty
    }
}

extension Fail: Equatable where Failure: Equatable {}
