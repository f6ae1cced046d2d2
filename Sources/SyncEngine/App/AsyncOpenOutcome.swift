import SyncStreams

/// The output of one `asyncOpen`: forwards states until the first final one (`.open`, `.error`, or the
/// end), then finishes the stream once; later sends do nothing. The task, the progress and credential
/// subscriptions and the timeout race to send.
///
/// Whether a state may still be sent and where it goes in the order are decided together, under one
/// lock: a state is queued only while the outcome is not decided, and the queue is sent in order by one
/// sender at a time, outside the lock (the first caller to find nobody sending becomes the sender). So
/// nothing follows the final state, not even a `.progress` sent from another thread at the moment the
/// outcome was decided.
final class AsyncOpenOutcome: Sendable {
    private enum Item: Sendable {
        case state(AsyncOpenState)
        case end
    }

    private struct State: Sendable {
        var isDecided = false
        var isSending = false
        var queue: [Item] = []
    }

    private let output: PassthroughSubject<AsyncOpenState, Never>
    private let state = Locked(State())

    init(_ output: PassthroughSubject<AsyncOpenState, Never>) { self.output = output }

    /// Sends a state that is not final, unless the outcome is decided.
    func send(_ value: AsyncOpenState) { enqueue([.state(value)], deciding: false) }

    /// Sends `last` (if any) and finishes, unless the outcome is decided already.
    func finish(_ last: AsyncOpenState?) { enqueue((last.map { [.state($0)] } ?? []) + [.end], deciding: true) }

    private func enqueue(_ items: [Item], deciding: Bool) {
        let becameSender = state.withLock { state -> Bool in
            guard !state.isDecided else { return false }
            if deciding { state.isDecided = true }
            state.queue += items
            guard !state.isSending else { return false }
            state.isSending = true
            return true
        }
        guard becameSender else { return }
        while true {
            let batch = state.withLock { state -> [Item] in
                defer { state.queue = [] }
                if state.queue.isEmpty { state.isSending = false }
                return state.queue
            }
            if batch.isEmpty { return }
            for item in batch {
                switch item {
                case .state(let value): output.send(value)
                case .end: output.send(completion: .finished)
                }
            }
        }
    }
}
