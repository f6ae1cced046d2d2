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

    @usableFromInline var liveCount: Int
    @usableFromInline var slot: Output?
    @usableFromInline var isTerminated = false

    @inlinable
    init(inputCount: Int) {
        liveCount = inputCount
        slot = nil
    }

    /// Input `index` emitted; `store` writes the value into the slot, which is emptied again at once.
    @inlinable
    mutating func valueReceived(_ index: Int, _ store: (inout Output?) -> Void) -> Action {
        guard !isTerminated else { return .none }
        store(&slot)
        guard let value = slot else { preconditionFailure("merge: an input's store wrote no value") }
        slot = nil
        return .emit(value)
    }

    /// Input `index` completed: a failure ends the output at once; `.finished` ends it when it was the
    /// last live input.
    @inlinable
    mutating func completed(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        guard !isTerminated else { return .none }
        liveCount -= 1
        if case .finished = completion, liveCount > 0 { return .none }
        isTerminated = true
        return OperatorAction(completion: completion, effect: .cancelInputs)
    }

    @inlinable
    mutating func cancelled() -> MultiInputEffect? {
        isTerminated = true
        return .cancelInputs
    }
}
