/// The state machine of the operators whose relay forwards events unchanged (`observe(on:)`,
/// `subscribe(on:)`): values pass until the completion, which passes once; nothing passes after it or
/// after cancellation, which asks to end the upstream.
@usableFromInline
struct ForwardingStateMachine<Output, Failure: Error> {
    @usableFromInline
    enum Effect {
        /// End the upstream subscription.
        case endUpstream
    }

    @usableFromInline typealias Action = OperatorAction<Output, Failure, Effect>

    @usableFromInline var isTerminated = false

    @inlinable
    init() {}

    @inlinable
    mutating func valueReceived(_ value: Output) -> Action { isTerminated ? .none : .emit(value) }

    @inlinable
    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        guard !isTerminated else { return .none }
        isTerminated = true
        return OperatorAction(completion: completion)
    }

    @inlinable
    mutating func cancelled() -> Effect {
        isTerminated = true
        return .endUpstream
    }
}
