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

    private enum Phase {
        case upstream
        case replacement
        case terminated
    }

    private var phase = Phase.upstream

    init() {}

    mutating func upstreamValue(_ value: Output) -> Action {
        guard case .upstream = phase else { return .none }
        return .emit(value)
    }

    mutating func upstreamCompleted(_ completion: StreamCompletion<UpstreamFailure>) -> Action {
        guard case .upstream = phase else { return .none }
        switch completion {
        case .finished:
            phase = .terminated
            return OperatorAction(completion: .finished)
        case .failure(let error):
            phase = .replacement
            return .perform(.subscribeReplacement(error))
        }
    }

    mutating func replacementValue(_ value: Output) -> Action {
        guard case .replacement = phase else { return .none }
        return .emit(value)
    }

    mutating func replacementCompleted(_ completion: StreamCompletion<Failure>) -> Action {
        guard case .replacement = phase else { return .none }
        phase = .terminated
        return OperatorAction(completion: completion)
    }

    mutating func cancelled() -> Effect {
        phase = .terminated
        return .endAll
    }
}
