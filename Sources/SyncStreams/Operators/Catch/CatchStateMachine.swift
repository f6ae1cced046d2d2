/// The logic of `catch`, without threads: which stream's events pass (the upstream's, then after its
/// failure the replacement's), and what to do at each step.
struct CatchStateMachine<Output, UpstreamFailure: Error, Failure: Error> {
    enum Effect {
        /// The upstream failed: make the replacement stream for the error and subscribe to it (the
        /// upstream subscription is over and can be released).
        case subscribeReplacement(UpstreamFailure)
        /// End both subscriptions: the subscriber invalidated.
        case endAll
    }

    typealias Action = OperatorAction<Output, Failure, Effect>

    /// Exhaustive: every event is handled in every phase, and an event no phase can receive (the
    /// upstream's after it failed, the replacement's before it was asked for or after it completed) is a
    /// broken stream contract, not a silent no-op.
    private enum Phase {
        /// Passing the upstream's events.
        case upstream
        /// The upstream failed: passing the replacement's events.
        case replacement
        /// One of them completed the output: nothing more can come from the one that did.
        case completed
        /// The subscriber invalidated: events already on their way are dropped.
        case cancelled
    }

    private var phase = Phase.upstream

    init() {}

    mutating func upstreamValue(_ value: Output) -> Action {
        switch phase {
        case .upstream: return .emit(value)
        case .cancelled: return .none
        case .replacement, .completed: preconditionFailure("catch: the upstream sent a value after its completion")
        }
    }

    mutating func upstreamCompleted(_ completion: StreamCompletion<UpstreamFailure>) -> Action {
        switch phase {
        case .upstream: break
        case .cancelled: return .none
        case .replacement, .completed: preconditionFailure("catch: the upstream completed twice")
        }
        switch completion {
        case .finished:
            phase = .completed
            return OperatorAction(completion: .finished)
        case .failure(let error):
            phase = .replacement
            return .perform(.subscribeReplacement(error))
        }
    }

    mutating func replacementValue(_ value: Output) -> Action {
        switch phase {
        case .replacement: return .emit(value)
        case .cancelled: return .none
        case .upstream: preconditionFailure("catch: a replacement value before the upstream failed")
        case .completed: preconditionFailure("catch: the replacement sent a value after its completion")
        }
    }

    mutating func replacementCompleted(_ completion: StreamCompletion<Failure>) -> Action {
        switch phase {
        case .replacement:
            phase = .completed
            return OperatorAction(completion: completion)
        case .cancelled: return .none
        case .upstream: preconditionFailure("catch: a replacement completion before the upstream failed")
        case .completed: preconditionFailure("catch: the replacement completed twice")
        }
    }

    mutating func cancelled() -> Effect {
        phase = .cancelled
        return .endAll
    }
}
