/// A type-erased stream: hides the concrete type of a stream (or an operator chain) behind its
/// `Output` and `Failure`.
///
/// Subscribing to it subscribes to the wrapped stream; it adds no buffering, no lock and no change of
/// semantics. It can also wrap a closure, to write a custom stream:
///
/// ```swift
/// let ticks = AnySyncStream<Int, Never> { onValue, onCompletion in
///     onValue(1); onValue(2); onCompletion(.finished)
///     return .empty
/// }
/// ```
/// A closure-based stream must keep the contract of `SyncStream` itself.
public struct AnySyncStream<Output: Sendable, Failure: Error>: SyncStream {
    @usableFromInline
    let subscribeBody:
        @Sendable (
            @escaping @Sendable (Output) -> Void,
            @escaping @Sendable (StreamCompletion<Failure>) -> Void
        ) -> SubscriptionToken

    /// Wraps `stream`. Wrapping an `AnySyncStream` does not add a layer.
    @inlinable
    public init<S: SyncStream>(_ stream: S) where S.Output == Output, S.Failure == Failure {
        if let erased = stream as? AnySyncStream<Output, Failure> {
            self = erased
        } else {
            subscribeBody = { onValue, onCompletion in stream.subscribe(onValue: onValue, onCompletion: onCompletion) }
        }
    }

    /// A stream whose subscription runs `subscribe`.
    ///
    /// The subscriber's callbacks count as stream callbacks wherever `subscribe` calls them (an
    /// `invalidate()` from inside one never waits for another thread), at the cost of one thread-local
    /// increment and decrement per event.
    @inlinable
    public init(
        subscribe:
            @escaping @Sendable (
                _ onValue: @escaping @Sendable (Output) -> Void,
                _ onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
            ) -> SubscriptionToken
    ) {
        subscribeBody = { onValue, onCompletion in
            subscribe(
                { value in CallbackScope.delivering { onValue(value) } },
                { completion in CallbackScope.delivering { onCompletion(completion) } }
            )
        }
    }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Output) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Failure>) -> Void
    ) -> SubscriptionToken {
        subscribeBody(onValue, onCompletion)
    }
}

extension SyncStream {
    /// This stream behind the type-erased `AnySyncStream`.
    @inlinable
    public func eraseToAnyStream() -> AnySyncStream<Output, Failure> { AnySyncStream(self) }
}

/// The namespace of the stream types that operators return (`Streams.Map`, `Streams.Filter`, …).
public enum Streams {}
