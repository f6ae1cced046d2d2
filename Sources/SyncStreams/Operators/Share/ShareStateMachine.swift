/// The logic of one `share` connection, without threads: its replay buffer, how many subscribers it
/// has, and when it is over.
///
/// - Each upstream value is emitted to the subscribers and kept for late subscribers (the last
///   `replayCount`; the oldest one evicted is released outside the lock).
/// - The upstream completion is emitted and ends the connection for good: a later subscriber still joins
///   it and receives the replay and the completion (the upstream is never subscribed to again).
/// - The last subscriber leaving a live connection ends it and asks to end the upstream subscription; the
///   next subscriber opens a new connection.
struct ShareStateMachine<Output, Failure: Error> {
    enum Effect {
        /// Release a value evicted from the replay buffer (outside the lock: may run user code).
        case discard(Output)
        /// End the upstream subscription (the last subscriber left).
        case endUpstream
    }

    typealias Action = OperatorAction<Output, Failure, Effect>

    private var replay = FIFO<Output>()
    private let replayCount: Int
    private var subscriberCount = 0
    /// The upstream completed: the connection delivers nothing more, and late subscribers receive the
    /// replay and the completion.
    private(set) var isCompleted = false
    /// The last subscriber left before the upstream completed: the upstream subscription was ended.
    private(set) var isAbandoned = false
    /// No more upstream events are accepted.
    var isOver: Bool { isCompleted || isAbandoned }

    init(replayCount: Int) { self.replayCount = replayCount }

    /// A subscriber wants to join: whether it may (the connection was not abandoned; a completed one is
    /// joined, for its replay and completion); counts it.
    mutating func join() -> Bool {
        guard !isAbandoned else { return false }
        subscriberCount += 1
        return true
    }

    /// What a joining subscriber receives first.
    var replayedValues: [Output] { replay.elements }

    mutating func valueReceived(_ value: Output) -> Action {
        guard !isOver else { return .none }
        var evicted: Output?
        if replayCount > 0 {
            replay.append(value)
            if replay.count > replayCount { evicted = replay.popFirst() }
        }
        return OperatorAction(value: value, effect: evicted.map { .discard($0) })
    }

    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        guard !isOver else { return .none }
        isCompleted = true
        return OperatorAction(completion: completion)
    }

    /// A subscriber left: the last one ends the connection.
    mutating func left() -> Effect? {
        subscriberCount -= 1
        guard subscriberCount == 0, !isOver else { return nil }
        isAbandoned = true
        return .endUpstream
    }
}
