import SyncStreams

/// The output of one `asyncOpen`: forwards states until the first final one (`.open`, `.error`, or the
/// end), then finishes the stream once; later sends do nothing. The task and the timeout race to finish.
final class AsyncOpenOutcome: Sendable {
    private let output: PassthroughSubject<AsyncOpenState, Never>
    private let isFinished = Locked(false)

    init(_ output: PassthroughSubject<AsyncOpenState, Never>) { self.output = output }

    /// Sends a state that is not final, unless the outcome is decided.
    func send(_ state: AsyncOpenState) {
        guard !isFinished.withLock({ $0 }) else { return }
        output.send(state)
    }

    /// Sends `last` (if any) and finishes, unless the outcome is decided already.
    func finish(_ last: AsyncOpenState?) {
        let first = isFinished.withLock { finished -> Bool in
            defer { finished = true }
            return !finished
        }
        guard first else { return }
        if let last { output.send(last) }
        output.send(completion: .finished)
    }
}
