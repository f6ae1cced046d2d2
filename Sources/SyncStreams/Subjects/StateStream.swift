/// A read-only view of a changing state: its current `value`, and a stream of its changes without repeats.
///
/// - `value` is the current state, readable from any thread.
/// - Subscribing delivers the current value at once, then each change; a value equal to the one the
///   subscriber last received is not delivered again.
/// - It never fails; it finishes when its source subject finishes.
///
/// The owner keeps the `CurrentValueSubject` and hands out the `StateStream`:
///
/// ```swift
/// private let connectionSubject = CurrentValueSubject<ConnectionState, Never>(.disconnected)
/// public var connectionState: StateStream<ConnectionState> { StateStream(connectionSubject) }
///
/// // source:     .disconnected  .connecting  .connecting  .connected
/// // subscriber: .disconnected  .connecting               .connected
/// ```
public struct StateStream<Value: Sendable & Equatable>: SyncStream {
    public typealias Output = Value
    public typealias Failure = Never

    @usableFromInline let source: CurrentValueSubject<Value, Never>
    @usableFromInline let current: (@Sendable () -> Value)?

    /// A read-only view of `source`.
    @inlinable
    public init(_ source: CurrentValueSubject<Value, Never>) {
        self.source = source
        current = nil
    }

    /// A view whose `value` is read from `current` — the owner's authoritative state, which may be ahead
    /// of what `source` has delivered so far when the owner delivers on an executor — while subscribers
    /// receive `source`'s values.
    package init(_ source: CurrentValueSubject<Value, Never>, current: @escaping @Sendable () -> Value) {
        self.source = source
        self.current = current
    }

    /// A state that never changes.
    public init(constant value: Value) {
        self.source = CurrentValueSubject(value)
        current = nil
    }

    /// The current state.
    @inlinable
    public var value: Value { current?() ?? source.value }

    @inlinable
    public func subscribe(
        onValue: @escaping @Sendable (Value) -> Void,
        onCompletion: @escaping @Sendable (StreamCompletion<Never>) -> Void
    ) -> SubscriptionToken {
        source.removeDuplicates().subscribe(onValue: onValue, onCompletion: onCompletion)
    }
}
