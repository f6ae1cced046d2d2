import SyncServer
import SyncStreams

/// The simulator's server store: an `InMemoryPartitionStore` (so the data outlives a server taken down
/// and brought back) whose logs' identities the simulator can replace, which makes the server refuse the
/// clients that hold the old identity with `clientResetRequired` (`historyLost`) — a forced client reset
/// that keeps the log.
actor SimulatorStore: PartitionStore {
    private let logs = InMemoryPartitionStore()
    private var historyIDs: [String: UInt64] = [:]
    private let random: SharedRandom
    private let counter = Locked(0)

    init(random: SharedRandom) { self.random = random }

    /// The entries are kept whole (in an `InMemoryPartitionStore`), with their origins.
    nonisolated var storesChangesetOrigins: Bool { true }

    /// How many calls the server made so far: the simulator's `settle()` waits for it to stand still.
    nonisolated var operations: Int { counter.withLock { $0 } }

    private func count() { counter.withLock { $0 += 1 } }

    func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        count()
        return await logs.summaries(of: partition)
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        count()
        return await logs.read(versions, of: partition)
    }

    func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        count()
        await logs.append(changesets, to: partition)
    }

    func clientFileRecords(of partition: String) async throws -> [ClientFileRecord] {
        count()
        return try await logs.clientFileRecords(of: partition)
    }

    func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) async throws {
        count()
        try await logs.appendClientFileRecords(records, to: partition)
    }

    /// A seeded identity per partition, kept until `replaceHistory(of:)`.
    func historyID(of partition: String) -> UInt64 {
        if let id = historyIDs[partition] { return id }
        let id = random.nonZero()
        historyIDs[partition] = id
        return id
    }

    /// Gives `partition`'s log a new identity (its entries stay): every client that synced it before must
    /// be reset. Takes effect when a server next loads the partition.
    func replaceHistory(of partition: String) {
        var id = random.nonZero()
        while id == historyIDs[partition] { id = random.nonZero() }
        historyIDs[partition] = id
    }
}
