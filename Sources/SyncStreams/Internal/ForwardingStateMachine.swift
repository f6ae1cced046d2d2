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

    /// Exhaustive: an upstream event after the upstream's completion is a broken contract and traps with a
    /// message instead of being dropped silently.
    @usableFromInline
    enum Phase {
        /// Passing events.
        case active
        /// The completion passed: the upstream sends nothing more.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    @usableFromInline var phase = Phase.active

    @inlinable
    init() {}

    @inlinable
    mutating func valueReceived(_ value: Output) -> Action {
        switch phase {
        case .active: return .emit(value)
        case .cancelled: return .none
        case .completed:
            preconditionFailure("observe(on:)/subscribe(on:): the upstream sent a value after its completion")
        }
    }

    @inlinable
    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        switch phase {
        case .active:
            phase = .completed
            return OperatorAction(completion: completion)
        case .cancelled:
            return .none
        case .completed:
            preconditionFailure("observe(on:)/subscribe(on:): the upstream completed twice")
        }
    }

    @inlinable
    mutating func cancelled() -> Effect {
        phase = .cancelled
        return .endUpstream
    }
}
