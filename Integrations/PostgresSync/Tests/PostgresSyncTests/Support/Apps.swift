import Dispatch
import Foundation
import SyncEngine
import SyncServer
import TestSupport

/// An app that reaches a front end on loopback over WebSocket, with real timers and short reconnect
/// delays, in a directory of its own.
func networkApp(
    port: Int, _ directory: TemporaryDirectory, uploadWindowBytes: Int = 8 << 20,
    configure: (inout SyncApp.Configuration) -> Void = { _ in }
) -> SyncApp {
    var configuration = SyncApp.Configuration(
        server: .webSocket(host: "127.0.0.1", port: port), directory: directory.url,
        backoff: ReconnectBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(300)),
        timerExecutor: DispatchQueue(label: "PostgresSyncTests.timers"), callbackExecutor: ImmediateExecutor(),
        uploadWindowBytes: uploadWindowBytes, logLevel: .off)
    configure(&configuration)
    return SyncApp(configuration: configuration)
}

/// The reasons of the client resets an app's `clientResetHandler` heard (`.willReset` events).
final class Resets: @unchecked Sendable {
    // @unchecked Sendable: `storage` is used under `lock`.
    private let lock = NSLock()
    private var storage: [ClientResetReason] = []

    var reasons: [ClientResetReason] { lock.withLock { storage } }

    var handler: @Sendable (ClientResetEvent, SyncSession) -> Void {
        { [weak self] event, _ in
            guard case .willReset(let reset) = event else { return }
            self?.lock.withLock { self?.storage.append(reset.reason) }
        }
    }
}

/// One client of a test: its app, its session on partition `p`, what it received, what it wrote.
final class Client: @unchecked Sendable {
    // @unchecked Sendable: `written` is appended to by the one task that writes; read after it ends.
    let tag: String
    let directory = TemporaryDirectory()
    let app: SyncApp
    let session: SyncSession
    let received: Collected<Changeset>
    let errors: Collected<(error: SyncError, session: SyncSession?)>
    private(set) var written: [Data] = []

    init(tag: String, port: Int, partition: String = "p", uploadWindowBytes: Int = 8 << 20) async throws {
        self.tag = tag
        app = networkApp(port: port, directory, uploadWindowBytes: uploadWindowBytes)
        errors = Collected(app.errors)
        session = try await app.login(.anonymous).openSession(partition: partition)
        received = Collected(session.changesets)
    }

    /// Writes changeset `index` of this client: its tag, the index, and filler of a size that varies with
    /// the index (up to ~12 KiB).
    func write(_ index: Int) async throws {
        let head = Array("\(tag) #\(index) ".utf8)
        let filler = (0..<((index * 7919) % 12_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        let data = Data(head + filler)
        written.append(data)
        try await session.write(data)
    }

    /// Waits (with a deadline, naming this client) until every write is acknowledged: a stuck upload fails
    /// the test and says whose, where a bare `wait(for: .upload)` would hang until the suite's limit.
    func allAcknowledged(limit: Duration = .seconds(60)) async throws {
        try await eventually("\(tag) has every write acknowledged", limit: limit) {
            session.pendingWrites.value.isEmpty
        }
    }

    /// Whether `changeset` is one of this client's own.
    func isOwn(_ data: [UInt8]) -> Bool { data.starts(with: Array("\(tag) #".utf8)) }

    func close() async {
        try? await app.close()
        directory.remove()
    }
}

/// Checks that `client`'s log — its session's `changesets`, which carry every entry of the partition
/// once the client holds it, its own (acknowledged) entries included — is `log`: the same changesets,
/// byte for byte, in the same order, with the same server versions; and that its own entries appear in
/// the order it wrote them. Returns the differences found (empty: equal).
func differences(of client: Client, from log: [StoredChangeset]) -> [String] {
    var problems: [String] = []
    let received = client.received.values
    if received.map({ Array($0.data) }) != log.map(\.data) {
        problems.append("\(client.tag) holds \(received.count) changesets that are not the log's \(log.count)")
    }
    if received.map(\.serverVersion) != log.map(\.serverVersion) {
        problems.append("\(client.tag) holds other server versions than the log's")
    }
    if log.filter({ client.isOwn($0.data) }).map(\.data) != client.written.map({ Array($0) }) {
        problems.append("\(client.tag)'s own changesets in the log are not what it wrote, in order")
    }
    return problems
}

extension Client {
    /// Has each of `writers` write its changesets 0..<`count`, all writers at once, then waits (with a
    /// deadline, naming the writer) until each has every write acknowledged.
    static func writeAtOnce(_ writers: [Client], count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in writers {
                group.addTask { for index in 0..<count { try await writer.write(index) } }
            }
            try await group.waitForAll()
        }
        for writer in writers { try await writer.allAcknowledged() }
    }
}
