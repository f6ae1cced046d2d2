/// The logic of `zip`, without threads: a buffer per input, and what to emit when an input emits or
/// completes. `Buffers` holds one FIFO per input (a tuple, or an array for the collection form); the
/// closures given at creation read and change it.
///
/// - A value joins its input's buffer; when every buffer holds a value, the oldest of each is taken and
///   emitted as one combined value (a value arriving can complete at most one combination).
/// - The output finishes once an input has finished and its buffer is used up (at once if it is empty
///   when the input finishes, or right after the combination that empties it); a failure ends it at
///   once. Ending asks to cancel the inputs.
struct ZipStateMachine<Buffers, Output, Failure: Error>: MultiInputStateMachine {
    typealias Action = OperatorAction<Output, Failure, MultiInputEffect>

    private var buffers: Buffers
    /// The buffers as they were at the start (empty), kept to replace them with when the zip ends.
    private let emptyBuffers: Buffers
    /// Exhaustive: an event of an input after that input's completion is a broken contract and traps with
    /// a message instead of being dropped silently. After the output ended, the other inputs' events on
    /// their way (they are being cancelled) are dropped.
    private enum Phase {
        case active
        /// The output completed (an input failed, or a finished input's buffer was used up).
        case completed
        /// The subscriber invalidated.
        case cancelled
    }

    private var isFinished: [Bool]
    private var phase = Phase.active
    var isTerminated: Bool {
        switch phase {
        case .active: false
        case .completed, .cancelled: true
        }
    }
    private let isReady: (Buffers) -> Bool
    private let take: (inout Buffers) -> Output
    private let isBufferEmpty: (Buffers, Int) -> Bool

    /// - Parameters:
    ///   - isReady: Whether every buffer holds a value.
    ///   - take: Removes the oldest value of each buffer and combines them.
    ///   - isBufferEmpty: Whether input `index`'s buffer is empty.
    init(
        buffers: Buffers,
        inputCount: Int,
        isReady: @escaping (Buffers) -> Bool,
        take: @escaping (inout Buffers) -> Output,
        isBufferEmpty: @escaping (Buffers, Int) -> Bool
    ) {
        self.buffers = buffers
        emptyBuffers = buffers
        isFinished = Array(repeating: false, count: inputCount)
        self.isReady = isReady
        self.take = take
        self.isBufferEmpty = isBufferEmpty
    }

    /// Input `index` emitted; `store` appends the value to its buffer.
    mutating func valueReceived(_ index: Int, _ store: (inout Buffers) -> Void) -> Action {
        precondition(!isFinished[index], "zip: input \(index) sent a value after its completion")
        switch phase {
        case .active: break
        case .completed, .cancelled: return .none
        }
        store(&buffers)
        guard isReady(buffers) else { return .none }
        let combined = take(&buffers)
        guard hasExhaustedFinishedInput else { return .emit(combined) }
        phase = .completed
        return OperatorAction(value: combined, completion: .finished, effect: .cancelInputs)
    }

    /// Input `index` completed.
    mutating func completed(_ index: Int, _ completion: StreamCompletion<Failure>) -> Action {
        precondition(!isFinished[index], "zip: input \(index) completed twice")
        isFinished[index] = true
        switch phase {
        case .active: break
        case .completed, .cancelled: return .none
        }
        if case .finished = completion {
            guard isBufferEmpty(buffers, index) else { return .none }
        }
        phase = .completed
        return OperatorAction(completion: completion, effect: .cancelInputs)
    }

    /// The subscriber invalidated.
    mutating func cancelled() -> MultiInputEffect? {
        phase = .cancelled
        return .cancelInputs
    }

    /// After the end: the other inputs' buffered values, which can never be zipped any more, handed out
    /// to be released outside the lock (not kept until the subscription is released).
    mutating func takeBuffersAfterEnd() -> Buffers? {
        guard isTerminated else { return nil }
        defer { buffers = emptyBuffers }
        return buffers
    }

    private var hasExhaustedFinishedInput: Bool {
        isFinished.indices.contains { isFinished[$0] && isBufferEmpty(buffers, $0) }
    }
}
