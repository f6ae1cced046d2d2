/// The logic of `merge`, without threads: values pass; the output finishes when every input finished;
/// the first failure ends it at once (and asks to cancel the other inputs).
///
/// A `MultiInputStateMachine` like `combineLatest`'s and `zip`'s, so all three run in one storage type
/// (`MultiInputStorage`). Its buffer is a single slot: the storage writes an input's value into it and
/// the machine takes it straight out again to emit it, so nothing stays buffered between events.
@usableFromInline
struct MergeStateMachine<Output, Failure: Error>: MultiInputStateMachine {
    @usableFromInline typealias Buffers = Output?
    @usableFromInline typealias Action = OperatorAction<Output, Failure, MultiInputEffect>

    /// Exhaustive: an input that completes twice is a broken contract and traps with a message instead of
    /// being counted twice. After the output ended, the other inputs' events on their way (they are being
    /// cancelled) are dropped.
    @usableFromInline enum Phase {
        /// Forwarding values; `liveInputs` inputs have not completed (at least one).
        case active(liveInputs: Int)
        /// The output completed: every input finished, or one failed.
        case completed
        /// The subscriber invalidated.
        case cancelled
    }

    @usableFromInline var phase: Phase
    @usableFromInline var slot: Output?
    /// Which inputs completed (to catch a second completion).
    @usableFromInline var isFinished: [Bool]

    @inlinable
    var isTerminated: Bool {
        switch phase {
        case .active: false
        case .completed, .cancelled: true
        }
    }

    /// A merge of `inputCount` inputs (at least one: `merge` of no inputs is `Empty`, built elsewhere).
    @inlinable
    init(inputCount: Int) {
        precondition(inputCount > 0, "merge: a state machine needs at least one input")
        phase = .active(liveInputs: inputCount)
        slot = nil
        isFinished = Array(repeating: false, count: inputCount)
    }

    /// Input `index` emitted; `store` writes the value into the slot, which is emptied again at once.
    @inlinable
    mutating func valueReceived(_ index: Int, _ store: (inout Output?) -> Void) -> Action {
        switch phase {
        case .active: break
        case .completed, .cancelled: return .none
        }
        store(&slot)
        guard let value = slot else { preconditionFailure("merge: an input's store wrote no value") }
        slot = nil
        return .emit(value)
    }

    /// Input `index` completed: a failure ends the output at once; `.finished` ends it when it was the
    /// last live input.
    @inlinable
    mutating func completed(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        precondition(!isFinished[index], "merge: input \(index) completed twice")
        isFinished[index] = true
        switch phase {
        case .active(let liveInputs):
            if case .finished = completion, liveInputs > 1 {
                phase = .active(liveInputs: liveInputs - 1)
                return .none
            }
            phase = .completed
            return OperatorAction(completion: completion, effect: .cancelInputs)
        case .completed, .cancelled:
            return .none
        }
    }

    /// The subscriber invalidated.
    @inlinable
    mutating func cancelled() -> MultiInputEffect? {
        phase = .cancelled
        return .cancelInputs
    }
}
