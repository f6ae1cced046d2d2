import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// An app on its own temporary directory, against `server`, with test-friendly settings.
func makeApp(
    server: SyncEndpoint,
    directory: URL,
    transport: any SyncTransport = InMemoryTransport(),
    timers: any StreamExecutor = TestExecutor(),
    connectionSharing: ConnectionSharing = .perUser,
    stopPolicy: StopPolicy = .afterChangesUploaded,
    random: @escaping @Sendable () -> Double = { 0 },
    timing: EngineTiming = EngineTiming(),
    fileSystem: any FileSystem = SystemFileSystem(),
    configure: (inout SyncApp.Configuration) -> Void = { _ in }
) -> SyncApp {
    var configuration = SyncApp.Configuration(
        server: server,
        directory: directory,
        transport: transport,
        connectionSharing: connectionSharing,
        stopPolicy: stopPolicy,
        backoff: timing.backoff,
        connectTimeout: timing.connectTimeout,
        pingInterval: timing.pingInterval,
        pongTimeout: timing.pongTimeout,
        timerExecutor: timers,
        callbackExecutor: ImmediateExecutor(),
        random: random
    )
    configuration.fileSystem = fileSystem
    configure(&configuration)
    return SyncApp(configuration: configuration)
}

/// The engine's timing configuration, Realm's defaults unless changed.
struct EngineTiming {
    var backoff = ReconnectBackoff()
    var connectTimeout: Duration = .seconds(120)
    var pingInterval: Duration = .seconds(60)
    var pongTimeout: Duration = .seconds(120)
}

/// A transport over `InMemoryTransport` that injects faults: refusing or holding connection attempts,
/// dropping open connections, and swallowing the server's pongs.
final class FaultInjectingTransport: SyncTransport {
    struct Faults {
        /// New attempts fail at once with `.refused`.
        var refuse = false
        /// New attempts fail at once with `.certificateRejected` (as a TLS transport reports a wrong certificate).
        var rejectCertificate = false
        /// New attempts never open (until the client gives up and closes them).
        var hold = false
        /// Pongs from the server are not delivered.
        var swallowPongs = false
        /// The server's messages are held in transit (in order) until `deliverDelayedMessages()`.
        var delayMessages = false
        /// The client's uploads are dropped in transit (as if lost with a connection that then survived).
        var dropUploads = false
    }

    private let inner = InMemoryTransport()
    private let state = Locked<(faults: Faults, connections: [FaultyConnection], attempts: Int)>((Faults(), [], 0))

    /// The faults applied from now on.
    var faults: Faults {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// How many connection attempts the engine made.
    var attempts: Int { state.withLock { $0.attempts } }

    func connect(to endpoint: SyncEndpoint) -> any SyncClientConnection {
        let faults = state.withLock { state -> Faults in
            state.attempts += 1
            return state.faults
        }
        let connection = FaultyConnection(
            inner: faults.refuse || faults.hold || faults.rejectCertificate ? nil : inner.connect(to: endpoint),
            currentFaults: { [state] in state.withLock { $0.faults } }
        )
        if faults.refuse { connection.end(.refused("refused by the test")) }
        if faults.rejectCertificate { connection.end(.certificateRejected("rejected by the test")) }
        state.withLock { $0.connections.append(connection) }
        return connection
    }

    /// Stops delaying and delivers every held message, in order.
    func deliverDelayedMessages() {
        let connections = state.withLock { state -> [FaultyConnection] in
            state.faults.delayMessages = false
            return state.connections
        }
        for connection in connections { connection.releaseHeld() }
    }

    /// How many changesets the connections hold in transit (in `download` messages), for tests that must
    /// know a message was held rather than wait and see that it did not arrive.
    var heldChangesetCount: Int {
        held.reduce(0) { count, message in
            guard case .download(let download) = message else { return count }
            return count + download.entries.filter { if case .changeset = $0 { true } else { false } }.count
        }
    }

    /// The server messages held in transit, oldest first.
    var held: [ServerMessage] { state.withLock { $0.connections }.flatMap(\.heldMessages) }

    /// Delivers the oldest held message (of the oldest connection holding one) and returns it; `nil` when
    /// none is held. Messages go on being held.
    @discardableResult
    func releaseOne() -> ServerMessage? {
        for connection in state.withLock({ $0.connections }) {
            if let message = connection.releaseFirst() { return message }
        }
        return nil
    }

    /// Ends every open connection as a TLS transport does when it rejects the server's certificate.
    func rejectCertificates() {
        let connections = state.withLock { state -> [FaultyConnection] in
            defer { state.connections.removeAll() }
            return state.connections
        }
        for connection in connections { connection.end(.certificateRejected("rejected by the test")) }
    }

    /// Ends every open connection as if the network failed.
    func dropConnections() {
        let connections = state.withLock { state -> [FaultyConnection] in
            defer { state.connections.removeAll() }
            return state.connections
        }
        let binding = connections.reduce(0) { $0 + $1.bindsAwaitingAnswer }
        droppedBinds.withLock { $0 += binding }
        for connection in connections { connection.end(.connectionLost("dropped by the test")) }
    }

    private let droppedBinds = Locked(0)

    /// How many binds `dropConnections()` cut off before their answer arrived: how often a drop landed while
    /// a session was binding.
    var bindsCutOffByDrops: Int { droppedBinds.withLock { $0 } }
}

final class FaultyConnection: SyncClientConnection {
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let inner: (any SyncClientConnection)?
    private let currentFaults: @Sendable () -> FaultInjectingTransport.Faults
    /// Whether the connection ended, and the server messages held in transit.
    private let state = Locked<(ended: Bool, held: [SyncTransportEvent])>((false, []))

    init(inner: (any SyncClientConnection)?, currentFaults: @escaping @Sendable () -> FaultInjectingTransport.Faults) {
        (events, continuation) = AsyncStream.makeStream()
        self.inner = inner
        self.currentFaults = currentFaults
        guard let inner else { return }
        Task { [weak self] in
            for await event in inner.events {
                guard let self else { return }
                switch event {
                case .message(.pong) where currentFaults().swallowPongs:
                    continue
                case .message where currentFaults().delayMessages:
                    self.state.withLock { $0.held.append(event) }
                case .closed:
                    self.end(with: event)
                    return
                default:
                    self.forward(event)
                }
            }
        }
    }

    /// The sessions whose bind was sent and whose answer (a download or an error) has not been delivered.
    private let unansweredBinds = Locked<Set<UInt32>>([])

    /// How many binds wait for their answer: non-zero while a session is binding on this connection.
    var bindsAwaitingAnswer: Int { unansweredBinds.withLock { $0.count } }

    func send(_ message: ClientMessage) {
        if case .bind(let bind) = message { _ = unansweredBinds.withLock { $0.insert(bind.sessionID) } }
        if case .upload = message, currentFaults().dropUploads { return }
        inner?.send(message)
    }

    func close() { end(nil) }

    func end(_ error: SyncTransportError?) {
        inner?.close()
        end(with: .closed(error))
    }

    /// The server messages held in transit, oldest first.
    var heldMessages: [ServerMessage] {
        state.withLock { state in
            state.held.compactMap { event in
                if case .message(let message) = event { message } else { nil }
            }
        }
    }

    /// Delivers the oldest held message and returns it (`nil` when none is held or the connection ended).
    func releaseFirst() -> ServerMessage? {
        let first = state.withLock { state -> SyncTransportEvent? in
            guard !state.ended, !state.held.isEmpty else { return nil }
            return state.held.removeFirst()
        }
        guard let first else { return nil }
        forward(first)
        if case .message(let message) = first { return message }
        return nil
    }

    /// Delivers the held messages, in order.
    func releaseHeld() {
        let held = state.withLock { state -> [SyncTransportEvent] in
            defer { state.held.removeAll() }
            return state.ended ? [] : state.held
        }
        for event in held { forward(event) }
    }

    private func forward(_ event: SyncTransportEvent) {
        guard !state.withLock({ $0.ended }) else { return }
        switch event {
        case .message(.download(let download)):
            _ = unansweredBinds.withLock { $0.remove(download.sessionID) }
        case .message(.error(let error)):
            if let id = error.sessionID { _ = unansweredBinds.withLock { $0.remove(id) } }
        default:
            break
        }
        continuation.yield(event)
    }

    private func end(with closing: SyncTransportEvent) {
        guard
            !state.withLock({ state in
                defer { state.ended = true }; return state.ended
            })
        else { return }
        continuation.yield(closing)
        continuation.finish()
    }
}
