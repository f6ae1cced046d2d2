/// The logic of `combineLatest`, without threads: the latest value of each input, and what to emit when
/// an input emits or completes.
///
/// - A value updates its input's slot in `partial`; once every input has a value, each value emits the
///   combined result.
/// - `.finished` of an input ends the output when the input never emitted (no combination can form) or
///   when it was the last live input; a failure ends the output at once. Ending asks to cancel the inputs.
@usableFromInline
struct CombineLatestStateMachine<Partial, Output, Failure: Error>: MultiInputStateMachine {
    @usableFromInline typealias Buffers = Partial
    @usableFromInline typealias Action = OperatorAction<Output, Failure, MultiInputEffect>

    @usableFromInline var partial: Partial
    @usableFromInline var hasValue: [Bool]
    @usableFromInline var missingCount: Int
    @usableFromInline var liveCount: Int
    @usableFromInline var isTerminated = false
    @usableFromInline let combine: (Partial) -> Output

    @inlinable
    init(empty partial: Partial, inputCount: Int, combine: @escaping (Partial) -> Output) {
        self.partial = partial
        hasValue = Array(repeating: false, count: inputCount)
        missingCount = inputCount
        liveCount = inputCount
        self.combine = combine
    }

    /// Input `index` emitted; `store` writes the value into its slot.
    @inlinable
    mutating func valueReceived(_ index: Int, _ store: (inout Partial) -> Void) -> Action {
        guard !isTerminated else { return .none }
        store(&partial)
        if _slowPath(missingCount != 0) {
            if !hasValue[index] {
                hasValue[index] = true
                missingCount -= 1
            }
            if missingCount != 0 { return .none }
        }
        return .emit(combine(partial))
    }

    /// Input `index` completed.
    @inlinable
    mutating func completed(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        guard !isTerminated else { return .none }
        liveCount -= 1
        switch completion {
        case .failure:
            break
        case .finished:
            guard !hasValue[index] || liveCount == 0 else { return .none }
        }
        isTerminated = true
        return OperatorAction(completion: completion, effect: .cancelInputs)
    }

    /// The subscriber invalidated.
    @inlinable
    mutating func cancelled() -> MultiInputEffect? {
        isTerminated = true
        return .cancelInputs
    }
}
