/// Mutable per-subscription state of an operator that only its upstream's callbacks touch.
///
/// `@unchecked Sendable` is sound because of the stream contract: events to one subscriber are serialized,
/// and consecutive callbacks are ordered by the upstream's lock hand-over (happens-before), so `value` is
/// never accessed by two threads at once. Only use it for state read and written inside those callbacks.
@usableFromInline
final class SerialBox<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}

/// Stores `value` in `slot` and returns the value it replaced (for the caller to release where it may:
/// outside a lock).
@inlinable
func replace<Value>(_ slot: inout Value, with value: Value) -> Value {
    let previous = slot
    slot = value
    return previous
}
