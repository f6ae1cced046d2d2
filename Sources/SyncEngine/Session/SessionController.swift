import SyncStreams

/// The session's state machine behind a lock, callable synchronously from any thread; its states are
/// published in order on the session's callback executor.
final class SessionController: Sendable {
    private let machine: Locked<SessionStateMachine>
    private let publisher: OrderedPublisher<SessionState>
    /// Called after each change is decided (the engine reconciles what it does with the new state).
    private let onChange: @Sendable () -> Void
    /// Logs each new state.
    private let log: @Sendable (SessionState) -> Void

    /// A controller starting `.active`, or `.inactive` when `suspended`.
    init(
        stopPolicy: StopPolicy,
        suspended: Bool = false,
        executor: any StreamExecutor,
        log: @escaping @Sendable (SessionState) -> Void = { _ in },
        onChange: @escaping @Sendable () -> Void
    ) {
        let machine = SessionStateMachine(stopPolicy: stopPolicy, suspended: suspended)
        self.machine = Locked(machine)
        publisher = OrderedPublisher(machine.state, executor: executor)
        self.log = log
        self.onChange = onChange
    }

    /// The state as a stream: `value` is the state as of the last event; subscribers are called on the
    /// callback executor.
    var stateStream: StateStream<SessionState> { publisher.stateStream }

    /// Ends the state stream after the states published before (the session shut down for good).
    func finishStateStream() { publisher.finish() }

    /// The state as of the last event.
    var state: SessionState { machine.withLock { $0.state } }

    var wantsSync: Bool { machine.withLock { $0.wantsSync } }

    var isShutDown: Bool { machine.withLock { $0.isShutDown } }

    func handle(_ event: SessionStateMachine.Event) {
        let (changed, new) = machine.withLock { machine -> (Bool, SessionState?) in
            let wasShutDown = machine.isShutDown
            let new = machine.handle(event)
            if let new { publisher.enqueue(new) }
            return (new != nil || machine.isShutDown != wasShutDown, new)
        }
        guard changed else { return }
        if let new { log(new) }
        publisher.drain()
        onChange()
    }
}
