import Foundation
import SyncServer
import SyncWire
import Testing

@testable import SyncEngine

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SyncEngineTests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits until `condition` holds, checking after each turn of the cooperative pool, for at most `limit` of
/// real time (a generous deadline for work other threads do; never an assertion on durations).
func eventually(
    _ what: String,
    limit: Duration = .seconds(20),
    _ condition: @Sendable () async -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while !(await condition()) {
        if ContinuousClock.now > deadline { throw TimedOut(what: what) }
        await Task.yield()
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// An app on its own temporary directory, against `server`, with test-friendly settings.
func makeApp(
    server: SyncEndpoint,
    directory: URL,
    transport: any SyncTransport = InMemoryTransport(),
    timers: any StreamExecutor = TestExecutor(),
    connectionSharing: ConnectionSharing = .perUser,
    stopPolicy: StopPolicy = .afterChangesUploaded,
    random: @escaping @Sendable () -> Double = { 0 }
) -> SyncApp {
    SyncApp(
        configuration: .init(
            server: server,
            directory: directory,
            transport: transport,
            connectionSharing: connectionSharing,
            stopPolicy: stopPolicy,
            timerExecutor: timers,
            callbackExecutor: ImmediateExecutor(),
            random: random
        )
    )
}

/// Collects a stream's values for assertions.
final class Collected<Value: Sendable>: Sendable {
    private let storage: Locked<(values: [Value], finished: Bool)>
    let token: SubscriptionToken

    init<S: SyncStream>(_ stream: S) where S.Output == Value {
        let storage = Locked<(values: [Value], finished: Bool)>(([], false))
        self.storage = storage
        token = stream.subscribe(
            onValue: { value in storage.withLock { $0.values.append(value) } },
            onCompletion: { _ in storage.withLock { $0.finished = true } }
        )
    }

    var values: [Value] { storage.withLock { $0.values } }
    var isFinished: Bool { storage.withLock { $0.finished } }
}

/// A transport over `InMemoryTransport` that injects faults: refusing or holding connection attempts,
/// dropping open connections, and swallowing the server's pongs.
final class FaultInjectingTransport: SyncTransport {
    struct Faults {
        /// New attempts fail at once with `.refused`.
        var refuse = false
        /// New attempts never open (until the client gives up and closes them).
        var hold = false
        /// Pongs from the server are not delivered.
        var swallowPongs = false
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
            inner: faults.refuse || faults.hold ? nil : inner.connect(to: endpoint),
            swallowPongs: { [state] in state.withLock { $0.faults.swallowPongs } }
        )
        if faults.refuse { connection.end(.refused("refused by the test")) }
        state.withLock { $0.connections.append(connection) }
        return connection
    }

    /// Ends every open connection as if the network failed.
    func dropConnections() {
        let connections = state.withLock { state -> [FaultyConnection] in
            defer { state.connections.removeAll() }
            return state.connections
        }
        for connection in connections { connection.end(.connectionLost("dropped by the test")) }
    }
}

final class FaultyConnection: SyncClientConnection {
    let events: AsyncStream<SyncTransportEvent>
    private let continuation: AsyncStream<SyncTransportEvent>.Continuation
    private let inner: (any SyncClientConnection)?
    private let ended = Locked(false)

    init(inner: (any SyncClientConnection)?, swallowPongs: @escaping @Sendable () -> Bool) {
        (events, continuation) = AsyncStream.makeStream()
        self.inner = inner
        guard let inner else { return }
        Task { [continuation, ended] in
            for await event in inner.events {
                if ended.withLock({ $0 }) { return }
                if case .message(.pong) = event, swallowPongs() { continue }
                if case .closed = event {
                    if ended.withLock({ ended in
                        defer { ended = true }; return ended
                    }) {
                        return
                    }
                    continuation.yield(event)
                    continuation.finish()
                    return
                }
                continuation.yield(event)
            }
        }
    }

    func send(_ message: ClientMessage) { inner?.send(message) }

    func close() { end(nil) }

    func end(_ error: SyncTransportError?) {
        guard
            !ended.withLock({ ended in
                defer { ended = true }; return ended
            })
        else { return }
        inner?.close()
        continuation.yield(.closed(error))
        continuation.finish()
    }
}
