import SyncStreams
import SyncWire

/// One app incarnation's network in the simulation: connections go, in memory, to whichever server
/// incarnation runs now (the endpoint the engine names is ignored, so a restarted server is the same
/// address); a drop can be armed to end the connections after a given number of further messages (in
/// either direction: a drop at a message boundary); and `kill()` (the app crashed) ends every connection
/// and refuses every later one.
final class SimulatedTransport: SyncTransport {
    private struct State {
        var connections: [SimulatedConnection] = []
        /// Messages left before the armed drop (applies to the connections open now and the next ones).
        var dropAfter: Int?
        var killed = false
        var drops = 0
    }

    private let inner = InMemoryTransport()
    private let currentEndpoint: @Sendable () -> SyncEndpoint?
    private let state = Locked(State())

    init(currentEndpoint: @escaping @Sendable () -> SyncEndpoint?) {
        self.currentEndpoint = currentEndpoint
    }

    /// How many connections an armed drop ended.
    var dropCount: Int { state.withLock { $0.drops } }

    func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        let (killed, target) = state.withLock { ($0.killed, currentEndpoint()) }
        let connection = SimulatedConnection(
            inner: killed ? nil : target.map { inner.connect(to: $0) }, transport: self)
        if killed || target == nil { connection.end(.refused("the simulation refuses this connection")) }
        state.withLock { state in
            state.connections.removeAll { $0.isEnded }
            state.connections.append(connection)
        }
        return connection
    }

    /// Ends the connections after `messages` further messages (sent or received, all connections
    /// counted together).
    func armDrop(afterMessages messages: Int) { state.withLock { $0.dropAfter = max(0, messages) } }

    /// Lifts an armed drop that has not fired yet.
    func disarm() { state.withLock { $0.dropAfter = nil } }

    /// The app crashed: every connection ends now, and later attempts are refused.
    func kill() {
        let connections = state.withLock { state -> [SimulatedConnection] in
            state.killed = true
            state.dropAfter = nil
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections { connection.end(.connectionLost("the app crashed")) }
    }

    /// Called for each message passing through a connection: true when the armed drop fires at it (the
    /// message is then not passed on, and every connection ends).
    fileprivate func messagePassing() -> Bool {
        let fire = state.withLock { state -> [SimulatedConnection]? in
            guard let left = state.dropAfter else { return nil }
            if left > 0 {
                state.dropAfter = left - 1
                return nil
            }
            state.dropAfter = nil
            state.drops += 1
            return state.connections
        }
        guard let fire else { return false }
        for connection in fire { connection.end(.connectionLost("dropped by the simulation")) }
        return true
    }
}

/// A connection of `SimulatedTransport`: forwards both directions and ends when its transport says so.
final class SimulatedConnection: SyncClientConnection {
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let inner: (any SyncClientConnection)?
    private weak let transport: SimulatedTransport?
    private let ended = Locked(false)

    init(inner: (any SyncClientConnection)?, transport: SimulatedTransport) {
        (events, continuation) = AsyncStream.makeStream()
        self.inner = inner
        self.transport = transport
        guard let inner else { return }
        Task { [weak self] in
            for await event in inner.events {
                guard let self else { return }
                switch event {
                case .closed:
                    self.finish(with: event)
                    return
                case .message:
                    if self.transport?.messagePassing() == true { return }
                    self.forward(event)
                case .opened:
                    self.forward(event)
                }
            }
        }
    }

    var isEnded: Bool { ended.withLock { $0 } }

    func send(_ message: ClientMessage) {
        guard !isEnded else { return }
        if transport?.messagePassing() == true { return }
        inner?.send(message)
    }

    func close() {
        inner?.close()
        finish(with: .closed(nil))
    }

    func end(_ error: SyncTransportError) {
        inner?.close()
        finish(with: .closed(error))
    }

    private func forward(_ event: SyncTransportEvent) {
        if !isEnded { continuation.yield(event) }
    }

    private func finish(with closing: SyncTransportEvent) {
        guard
            !ended.withLock({ ended in
                defer { ended = true }
                return ended
            })
        else { return }
        continuation.yield(closing)
        continuation.finish()
    }
}
