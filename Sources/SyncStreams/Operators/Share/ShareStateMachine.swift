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

    /// Where the connection is. Exhaustive: an upstream event after the upstream's completion, or a
    /// subscriber leaving that never joined, is a broken contract and traps with a message instead of
    /// being dropped silently.
    enum Phase: Equatable {
        /// Connected: upstream events pass.
        case live
        /// The upstream completed: the connection delivers nothing more, and late subscribers receive the
        /// replay and the completion.
        case completed
        /// The last subscriber left before the upstream completed: the upstream subscription was ended (its
        /// events already on their way are dropped), and nobody joins any more.
        case abandoned
    }

    private var replay = FIFO<Output>()
    private let replayCount: Int
    private var subscriberCount = 0
    private(set) var phase = Phase.live
    /// No more upstream events are accepted.
    var isOver: Bool { phase != .live }

    init(replayCount: Int) { self.replayCount = replayCount }

    /// A subscriber wants to join: whether it may (the connection was not abandoned; a completed one is
    /// joined, for its replay and completion); counts it.
    mutating func join() -> Bool {
        guard phase != .abandoned else { return false }
        subscriberCount += 1
        return true
    }

    /// What a joining subscriber receives first.
    var replayedValues: [Output] { replay.elements }

    mutating func valueReceived(_ value: Output) -> Action {
        switch phase {
        case .live: break
        case .abandoned: return .none
        case .completed: preconditionFailure("share: the upstream sent a value after its completion")
        }
        var evicted: Output?
        if replayCount > 0 {
            replay.append(value)
            if replay.count > replayCount { evicted = replay.popFirst() }
        }
        return OperatorAction(value: value, effect: evicted.map { .discard($0) })
    }

    mutating func completed(_ completion: StreamCompletion<Failure>) -> Action {
        switch phase {
        case .live:
            phase = .completed
            return OperatorAction(completion: completion)
        case .abandoned:
            return .none
        case .completed:
            preconditionFailure("share: the upstream completed twice")
        }
    }

    /// A subscriber left: the last one ends a live connection.
    mutating func left() -> Effect? {
        precondition(subscriberCount > 0, "share: a subscriber left a connection it never joined")
        subscriberCount -= 1
        guard subscriberCount == 0, phase == .live else { return nil }
        phase = .abandoned
        return .endUpstream
    }
}
