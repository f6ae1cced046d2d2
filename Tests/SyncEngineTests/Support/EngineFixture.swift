import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport

@testable import SyncEngine

/// An app on a temporary directory, against an embedded server (a new one unless given), reached through a
/// `FaultInjectingTransport`, with every engine timer on a `TestExecutor` and every error collected.
struct EngineFixture {
    let server: SyncServer
    let transport = FaultInjectingTransport()
    let timers = TestExecutor()
    let directory: TemporaryDirectory
    let app: SyncApp
    let errors: Collected<(error: SyncError, session: SyncSession?)>

    init(
        server: SyncServer? = nil,
        sharing: ConnectionSharing = .perUser,
        stopPolicy: StopPolicy = .afterChangesUploaded,
        random: @escaping @Sendable () -> Double = { 0 },
        faults: FaultInjectingTransport.Faults = .init(),
        directory: TemporaryDirectory = TemporaryDirectory(),
        timing: EngineTiming = EngineTiming(),
        fileSystem: any FileSystem = SystemFileSystem(),
        configure: (inout SyncApp.Configuration) -> Void = { _ in }
    ) async throws {
        self.directory = directory
        if let server {
            self.server = server
        } else {
            self.server = try await SyncServer.embedded()
        }
        transport.faults = faults
        app = makeApp(
            server: self.server.endpoint,
            directory: directory.url,
            transport: transport,
            timers: timers,
            connectionSharing: sharing,
            stopPolicy: stopPolicy,
            random: random,
            timing: timing,
            fileSystem: fileSystem,
            configure: configure
        )
        errors = Collected(app.errors)
    }

    func open(_ partition: String = "p", credentials: SyncCredentials = .anonymous) async throws -> SyncSession {
        try await app.login(credentials).openSession(partition: partition)
    }

    /// Lets the held first attempt time out (120 s), then the reconnect after the 1 s backoff go through.
    func connectAfterTheHeldAttemptTimesOut() async throws {
        try await eventually("connect timeout armed") { timers.nextDueTime == .zero + .seconds(120) }
        timers.advance(by: .seconds(120))
        try await eventually("reconnect scheduled") { timers.nextDueTime == timers.now + .seconds(1) }
        timers.advance(by: .seconds(1))
    }

    /// The partition's log on the server.
    func serverLog(_ partition: String = "p") async throws -> [[UInt8]] {
        try await server.changesets(in: partition).map(\.data)
    }
}

/// A server store that fails its first `failingAppends` appends, then keeps changesets in memory.
actor FlakyStore: PartitionStore {
    private var failuresLeft: Int
    private var partitions: [String: [StoredChangeset]] = [:]

    struct InjectedFailure: Error {}

    init(failingAppends: Int) { failuresLeft = failingAppends }

    func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        (partitions[partition] ?? []).map(\.summary)
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        (partitions[partition] ?? []).filter { versions.contains($0.serverVersion) }
    }

    func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        if failuresLeft > 0 {
            failuresLeft -= 1
            throw InjectedFailure()
        }
        partitions[partition, default: []].append(contentsOf: changesets)
    }
}
