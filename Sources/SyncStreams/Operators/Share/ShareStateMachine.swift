/// The logic of one `share` connection, without threads: its replay buffer, how many subscribers it
/// has, and when it is over.
///
/// - Each upstream value is emitted to the subscribers and kept for late subscribers (the last
///   `replayCount`; the oldest one evicted is released outside the lock).
/// - The upstream completion is emitted and ends the connection.
/// - The last subscriber leaving ends the connection and asks to end the upstream subscription.
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
    private(set) var isOver = false

    init(replayCount: Int) { self.replayCount = replayCount }

    /// A subscriber wants to join: whether it may (the connection is not over); counts it.
    mutating func join() -> Bool {
        guard !isOver else { return false }
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
        isOver = true
        return OperatorAction(completion: completion)
    }

    /// A subscriber left: the last one ends the connection.
    mutating func left() -> Effect? {
        subscriberCount -= 1
        guard subscriberCount == 0, !isOver else { return nil }
        isOver = true
        return .endUpstream
    }
}
