/// The logic of `merge`, without threads: values pass; the output finishes when every input finished;
/// the first failure ends it at once (and asks to cancel the other inputs).
struct MergeStateMachine<Output, Failure: Error> {
    enum Effect {
        /// End every input's subscription (the output has ended).
        case cancelInputs
    }

    typealias Action = OperatorAction<Output, Failure, Effect>

    private var liveCount: Int
    private(set) var isTerminated = false

    init(inputCount: Int) { liveCount = inputCount }

    mutating func valueReceived(_ value: Output) -> Action {
        isTerminated ? .none : .emit(value)
    }

    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        guard !isTerminated else { return .none }
        liveCount -= 1
        if case .finished = completion, liveCount > 0 { return .none }
        isTerminated = true
        return OperatorAction(completion: completion, effect: .cancelInputs)
    }

    mutating func cancelled() -> Effect? {
        isTerminated = true
        return .cancelInputs
    }
}
