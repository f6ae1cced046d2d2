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

    /// Exhaustive: an input that completes twice is a broken contract and traps with a message instead of
    /// being counted twice. After the output ended, the other inputs' events on their way (they are being
    /// cancelled) are dropped.
    @usableFromInline enum Phase {
        /// `missingInputs` inputs have not emitted yet (at least one): values are stored, nothing is
        /// emitted. `liveInputs` have not completed.
        case waitingForFirstValues(missingInputs: Int, liveInputs: Int)
        /// Every input has a value: each value emits the combination. `liveInputs` have not completed.
        case combining(liveInputs: Int)
        /// The output completed: an input finished without a value, every input finished, or one failed.
        case completed
        /// The subscriber invalidated.
        case cancelled
    }

    @usableFromInline var phase: Phase
    @usableFromInline var partial: Partial
    /// Which inputs have emitted (read while `waitingForFirstValues`).
    @usableFromInline var hasValue: [Bool]
    /// Which inputs completed (to catch a second completion).
    @usableFromInline var isFinished: [Bool]
    @usableFromInline let combine: (Partial) -> Output

    @inlinable
    var isTerminated: Bool {
        switch phase {
        case .waitingForFirstValues, .combining: false
        case .completed, .cancelled: true
        }
    }

    /// A machine over `inputCount` inputs (at least one: `combineLatest([])` is handled before any machine).
    @inlinable
    init(empty partial: Partial, inputCount: Int, combine: @escaping (Partial) -> Output) {
        precondition(inputCount > 0, "combineLatest: a state machine needs at least one input")
        phase = .waitingForFirstValues(missingInputs: inputCount, liveInputs: inputCount)
        self.partial = partial
        hasValue = Array(repeating: false, count: inputCount)
        isFinished = Array(repeating: false, count: inputCount)
        self.combine = combine
    }

    /// Input `index` emitted; `store` writes the value into its slot.
    @inlinable
    mutating func valueReceived(_ index: Int, _ store: (inout Partial) -> Void) -> Action {
        switch phase {
        case .combining:
            store(&partial)
            return .emit(combine(partial))
        case .waitingForFirstValues(let missingInputs, let liveInputs):
            store(&partial)
            guard !hasValue[index] else { return .none }
            hasValue[index] = true
            guard missingInputs == 1 else {
                phase = .waitingForFirstValues(missingInputs: missingInputs - 1, liveInputs: liveInputs)
                return .none
            }
            phase = .combining(liveInputs: liveInputs)
            return .emit(combine(partial))
        case .completed, .cancelled:
            return .none
        }
    }

    /// Input `index` completed.
    @inlinable
    mutating func completed(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        precondition(!isFinished[index], "combineLatest: input \(index) completed twice")
        isFinished[index] = true
        let remaining: Int
        switch phase {
        case .combining(let liveInputs):
            remaining = liveInputs - 1
            if case .finished = completion, remaining > 0 {
                phase = .combining(liveInputs: remaining)
                return .none
            }
        case .waitingForFirstValues(let missingInputs, let liveInputs):
            remaining = liveInputs - 1
            // A finished input that has a value leaves the others to complete the first combination.
            if case .finished = completion, hasValue[index], remaining > 0 {
                phase = .waitingForFirstValues(missingInputs: missingInputs, liveInputs: remaining)
                return .none
            }
        case .completed, .cancelled:
            return .none
        }
        phase = .completed
        return OperatorAction(completion: completion, effect: .cancelInputs)
    }

    /// The subscriber invalidated.
    @inlinable
    mutating func cancelled() -> MultiInputEffect? {
        phase = .cancelled
        return .cancelInputs
    }
}
