import SyncStreams

/// The session's state machine behind a lock, published in order, callable synchronously from any thread.
final class SessionController: Sendable {
    private let machine: Locked<SessionStateMachine>
    private let publisher: OrderedPublisher<SessionState>
    /// Called after each change is published (the engine reconciles what it does with the new state).
    private let onChange: @Sendable () -> Void

    init(stopPolicy: StopPolicy, onChange: @escaping @Sendable () -> Void) {
        machine = Locked(SessionStateMachine(stopPolicy: stopPolicy))
        publisher = OrderedPublisher(.active)
        self.onChange = onChange
    }

    var subject: CurrentValueSubject<SessionState, Never> { publisher.subject }

    /// The state as of the last event (the subject may be a moment behind while it publishes).
    var state: SessionState { machine.withLock { $0.state } }

    var wantsSync: Bool { machine.withLock { $0.wantsSync } }

    func handle(_ event: SessionStateMachine.Event) {
        let changed = machine.withLock { machine -> Bool in
            guard let new = machine.handle(event) else { return false }
            publisher.enqueue(new)
            return true
        }
        guard changed else { return }
        publisher.drain()
        onChange()
    }
}
