/// What one step of an operator's state machine asks for: at most one value and a completion to emit
/// downstream (enqueued by the relay in the same critical section as the state change, so events leave in
/// the order of the state changes), and an effect the operator performs after the lock is released
/// (subscribe or end an upstream, start or stop a timer).
///
/// Every relay-backed operator has this shape: a value-type state machine whose event methods return an
/// `OperatorAction`, and a small storage class that runs each step with `Relay.step(_:)` and performs the
/// effect. The state machines know nothing of threads or time, so they are unit-tested directly.
@usableFromInline
struct OperatorAction<Output, Failure: Error, Effect> {
    /// A value to emit.
    @usableFromInline var value: Output?
    /// The completion to emit, after `value`.
    @usableFromInline var completion: StreamCompletion<Failure>?
    /// Work to perform outside the lock.
    @usableFromInline var effect: Effect?

    @inlinable
    init(value: Output? = nil, completion: StreamCompletion<Failure>? = nil, effect: Effect? = nil) {
        self.value = value
        self.completion = completion
        self.effect = effect
    }

    /// Nothing to do.
    @inlinable
    static var none: OperatorAction { OperatorAction() }

    /// Emit `value`.
    @inlinable
    static func emit(_ value: Output) -> OperatorAction { OperatorAction(value: value) }

    /// Perform `effect`.
    @inlinable
    static func perform(_ effect: Effect) -> OperatorAction { OperatorAction(effect: effect) }
}

extension OperatorAction: Sendable where Output: Sendable, Effect: Sendable {}
