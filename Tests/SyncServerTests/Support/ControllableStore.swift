import SyncServer

/// A `PartitionStore` in memory whose reads of summaries, reads of entries and appends can be made to fail.
actor ControllableStore: PartitionStore {
    struct Failure: Error {}

    private var logs: [String: [StoredChangeset]] = [:]
    var failsLoads = false
    var failsReads = false
    var failsAppends = false

    init(logs: [String: [StoredChangeset]] = [:]) { self.logs = logs }

    func setFailures(loads: Bool, appends: Bool, reads: Bool = false) {
        failsLoads = loads
        failsAppends = appends
        failsReads = reads
    }

    func summaries(of partition: String) throws -> [StoredChangesetSummary] {
        if failsLoads { throw Failure() }
        return (logs[partition] ?? []).map(\.summary)
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) throws -> [StoredChangeset] {
        if failsReads { throw Failure() }
        return (logs[partition] ?? []).filter { versions.contains($0.serverVersion) }
    }

    func append(_ changesets: [StoredChangeset], to partition: String) throws {
        if failsAppends { throw Failure() }
        logs[partition, default: []].append(contentsOf: changesets)
    }
}
