import Foundation
import SyncServer
import SyncWire
import TestSupport

@testable import SyncEngine

/// A wall clock the test sets, for a server's maximum offline time.
final class ServerClock: Sendable {
    private let date = Locked(Date(timeIntervalSince1970: 1_700_000_000))

    func advance(days: Double) { date.withLock { $0 += days * 86_400 } }
    var read: @Sendable () -> Date { { [date] in date.withLock { $0 } } }
}

/// A server that forgets client files unseen for 30 days, on `clock`.
func forgetfulServer(
    _ clock: ServerClock, store: any PartitionStore = InMemoryPartitionStore()
) async throws
    -> SyncServer
{
    try await SyncServer.embedded(
        configuration: .init(store: store, maximumOfflineTime: .seconds(30 * 86_400), clock: clock.read))
}

/// Writes `values` through a new app on its own directory, waits until they are uploaded, closes it.
func writeThroughNewApp(_ values: [UInt8], to server: SyncServer) async throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let app = makeApp(server: server.endpoint, directory: directory.url)
    let session = try await app.login(.anonymous).openSession(partition: "p")
    for value in values { try await session.write(payload(value)) }
    try await session.wait(for: .upload)
    try await app.close()
}

/// Copies a file store's files in `data` as they are now (not its lock) to `backup`: a backup of the
/// server that a test restores it from later.
func copyServerFiles(of data: TemporaryDirectory, to backup: TemporaryDirectory) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: data.url.path) where name != "LOCK" {
        try FileManager.default.copyItem(
            at: data.url.appendingPathComponent(name), to: backup.url.appendingPathComponent(name))
    }
}

/// Waits until `server` counts `connections` open connections: it has handled the end of the others (so
/// their client files were last seen before the test moves the server's clock on).
func serverNoticed(_ server: SyncServer, connections: Int) async throws {
    try await eventually("the server counts \(connections) connections", limit: .seconds(20)) {
        server.connectionCount == connections
    }
}

/// Records what a client reset hands out: the events of a session's stream and the handler's calls,
/// in the order they came, as text, and the events themselves.
final class ResetRecorder: Sendable {
    private let state = Locked<(log: [String], events: [ClientResetEvent])>(([], []))

    var log: [String] { state.withLock { $0.log } }
    var events: [ClientResetEvent] { state.withLock { $0.events } }

    /// The configuration's handler, which records "handler …".
    var handler: @Sendable (ClientResetEvent, SyncSession) -> Void {
        { [state] event, session in
            state.withLock { $0.log.append("handler \(Self.name(event)) \(session.partition)") }
        }
    }

    /// Subscribes to `session.clientResets`, recording "stream …".
    func watch(_ session: SyncSession) -> SubscriptionToken {
        session.clientResets.subscribe { [state] event in
            state.withLock {
                $0.log.append("stream \(Self.name(event))")
                $0.events.append(event)
            }
        }
    }

    private static func name(_ event: ClientResetEvent) -> String {
        switch event {
        case .willReset: "willReset"
        case .didReset: "didReset"
        }
    }
}

extension Collected where Value == Changeset {
    /// The bytes delivered so far.
    var bytes: [[UInt8]] { values.map { Array($0.data) } }
}

/// `count` bytes of `value`.
func payload(_ value: UInt8, count: Int = 8) -> Data { Data(repeating: value, count: count) }
