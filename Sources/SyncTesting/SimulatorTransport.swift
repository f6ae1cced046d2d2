import SyncStreams
import SyncWire

/// The simulator's network: connections go, in memory, to whichever server runs now (the endpoint the
/// engine names is ignored, so a server brought back up is the same address), and every message passes
/// through a per-connection, per-direction queue that the simulator can delay, stall, or cut.
///
/// Delays and stalls are in the virtual time of the simulator's `TestExecutor`: a held message is
/// delivered by a job on it, so it arrives when the simulator advances its clock. Messages of one
/// direction of one connection always arrive in the order sent. Without delay, stall or flakiness a
/// message passes at once, as with `InMemoryTransport`.
final class SimulatorTransport: SyncTransport {
    /// What the network does to messages now.
    struct Conditions: Sendable {
        var delay: Duration = .zero
        var stalledUntil: StreamInstant?
        var flakiness: SyncSimulator.Flakiness = .none
    }

    private struct State {
        var connections: [SimulatorConnection] = []
        var conditions = Conditions()
        var messages = 0
        var drops = 0
    }

    private let inner = InMemoryTransport()
    private let executor: TestExecutor
    private let random: SharedRandom
    private let currentEndpoint: @Sendable () -> SyncEndpoint?
    private let state = Locked(State())

    init(executor: TestExecutor, random: SharedRandom, currentEndpoint: @escaping @Sendable () -> SyncEndpoint?) {
        self.executor = executor
        self.random = random
        self.currentEndpoint = currentEndpoint
    }

    func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        let connection = SimulatorConnection(transport: self, executor: executor)
        state.withLock { state in
            state.connections.removeAll { $0.isEnded }
            state.connections.append(connection)
        }
        if let target = currentEndpoint() {
            connection.start(inner: inner.connect(to: target))
        } else {
            connection.end(.refused("the simulated server is down"))
        }
        return connection
    }

    var conditions: Conditions {
        get { state.withLock { $0.conditions } }
        set { state.withLock { $0.conditions = newValue } }
    }

    /// How many messages were sent, delivered or dropped so far: the simulator waits for it to stand still.
    var messageCount: Int { state.withLock { $0.messages } }

    /// Counts a message handed on to its receiver.
    fileprivate func delivered(_ count: Int) {
        if count > 0 { state.withLock { $0.messages += count } }
    }

    /// How many connections were cut (by `dropAll` or by flakiness).
    var dropCount: Int { state.withLock { $0.drops } }

    /// Cuts every open connection: the client sees `.closed(.connectionLost)`, held messages are lost.
    func dropAll(reason: String) {
        let connections = state.withLock { state -> [SimulatorConnection] in
            defer { state.connections = [] }
            return state.connections
        }
        for connection in connections where !connection.isEnded {
            state.withLock { $0.drops += 1 }
            connection.end(.connectionLost(reason))
        }
    }

    /// Re-checks every connection's held messages (a stall was lifted or a delay shortened).
    func pumpAll() {
        for connection in state.withLock({ $0.connections }) { connection.pump() }
    }

    /// Decides the fate of one message about to be queued: when it may arrive, or `nil` when the flaky
    /// network cuts the connection at it.
    fileprivate func admit() -> StreamInstant? {
        let conditions = state.withLock { state -> Conditions in
            state.messages += 1
            return state.conditions
        }
        var delay = conditions.delay
        let flakiness = conditions.flakiness
        if flakiness.dropProbability > 0, random.unit() < flakiness.dropProbability {
            state.withLock { $0.drops += 1 }
            return nil
        }
        if flakiness.maximumExtraDelay > .zero {
            delay += flakiness.maximumExtraDelay * random.unit()
        }
        return executor.now + delay
    }
}

/// One connection of `SimulatorTransport`: forwards both directions through held queues.
final class SimulatorConnection: SyncClientConnection {
    private enum Held {
        case toClient(SyncTransportEvent)
        case toServer(ClientMessage)
    }

    private struct State {
        var inner: (any SyncClientConnection)?
        var toClient: [(due: StreamInstant, event: SyncTransportEvent)] = []
        var toServer: [(due: StreamInstant, message: ClientMessage)] = []
        var ended = false
        /// The due time of the pump job already scheduled, if any.
        var pumpAt: StreamInstant?
    }

    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private weak let transport: SimulatorTransport?
    private let executor: TestExecutor
    private let state = Locked(State())

    init(transport: SimulatorTransport, executor: TestExecutor) {
        (events, continuation) = AsyncStream.makeStream()
        self.transport = transport
        self.executor = executor
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// Starts forwarding what the server's side of `inner` sends.
    func start(inner: any SyncClientConnection) {
        state.withLock { $0.inner = inner }
        Task { [weak self] in
            for await event in inner.events {
                guard let self else { return }
                switch event {
                case .opened, .closed:
                    // Not a message: it is not dropped, but it waits behind the messages held before it.
                    self.hold(.toClient(event), due: self.executor.now)
                case .message:
                    guard let due = self.transport?.admit() else {
                        self.end(.connectionLost("dropped by the simulator's flaky network"))
                        return
                    }
                    self.hold(.toClient(event), due: due)
                }
            }
        }
    }

    func send(_ message: ClientMessage) {
        guard !isEnded else { return }
        guard let due = transport?.admit() else {
            end(.connectionLost("dropped by the simulator's flaky network"))
            return
        }
        hold(.toServer(message), due: due)
    }

    func close() { finish(with: .closed(nil)) }

    /// Ends the connection now with `error`; held messages are lost.
    func end(_ error: SyncTransportError) { finish(with: .closed(error)) }

    private func hold(_ item: Held, due: StreamInstant) {
        state.withLock { state in
            guard !state.ended else { return }
            switch item {
            case .toClient(let event): state.toClient.append((due, event))
            case .toServer(let message): state.toServer.append((due, message))
            }
        }
        pump()
    }

    /// Delivers, in order, every held message that is due and not stalled; schedules a job on the
    /// executor for the next one. Delivery happens under the lock (it only queues: the in-memory
    /// transport's `send` and the stream's `yield` call nobody), which keeps each direction in order.
    func pump() {
        let transport = transport
        let stalledUntil = transport?.conditions.stalledUntil
        var delivered = 0
        defer { transport?.delivered(delivered) }
        let wake = state.withLock { state -> StreamInstant? in
            guard !state.ended else { return nil }
            let now = executor.now
            var next: StreamInstant?
            if let stalledUntil, now < stalledUntil {
                if !state.toServer.isEmpty || !state.toClient.isEmpty { next = stalledUntil }
            } else {
                while let first = state.toServer.first, first.due <= now {
                    state.toServer.removeFirst()
                    state.inner?.send(first.message)
                    delivered += 1
                }
                while let first = state.toClient.first, first.due <= now {
                    state.toClient.removeFirst()
                    if case .closed = first.event {
                        state.ended = true
                        state.toClient = []
                        state.toServer = []
                        continuation.yield(first.event)
                        continuation.finish()
                        return nil
                    }
                    continuation.yield(first.event)
                    delivered += 1
                }
                next = [state.toServer.first?.due, state.toClient.first?.due].compactMap { $0 }.min()
            }
            guard let next, state.pumpAt.map({ next < $0 }) ?? true else { return nil }
            state.pumpAt = next
            return next
        }
        guard let wake else { return }
        _ = executor.schedule(after: wake - executor.now) { [weak self] in
            guard let self else { return }
            self.state.withLock { if $0.pumpAt == wake { $0.pumpAt = nil } }
            self.pump()
        }
    }

    private func finish(with closing: SyncTransportEvent) {
        let inner = state.withLock { state -> (any SyncClientConnection)?? in
            guard !state.ended else { return nil }
            state.ended = true
            state.toClient = []
            state.toServer = []
            continuation.yield(closing)
            continuation.finish()
            return .some(state.inner)
        }
        if let inner { inner?.close() }
    }
}
