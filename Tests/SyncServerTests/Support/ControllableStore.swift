import SyncServer

/// A `PartitionStore` in memory whose reads of summaries, reads of entries and appends can be made to fail,
/// that records the partitions it loaded and unloaded, and can hold unloads until released.
actor ControllableStore: PartitionStore {
    struct Failure: Error {}

    private var logs: [String: [StoredChangeset]] = [:]
    var failsLoads = false
    var failsReads = false
    var failsAppends = false
    /// Every partition whose summaries were read, in order.
    private(set) var loaded: [String] = []
    /// Every partition unloaded, in order (recorded when the unload starts).
    private(set) var unloaded: [String] = []
    private var holdsUnloads = false
    private var heldUnloads: [CheckedContinuation<Void, Never>] = []

    init(logs: [String: [StoredChangeset]] = [:]) { self.logs = logs }

    func setFailures(loads: Bool, appends: Bool, reads: Bool = false) {
        failsLoads = loads
        failsAppends = appends
        failsReads = reads
    }

    /// While `holds`, unloads wait; releasing lets the waiting ones finish.
    func setHoldsUnloads(_ holds: Bool) {
        holdsUnloads = holds
        guard !holds else { return }
        let held = heldUnloads
        heldUnloads = []
        for unload in held { unload.resume() }
    }

    /// How many unloads wait to be released.
    var heldUnloadCount: Int { heldUnloads.count }

    func unload(_ partition: String) async {
        unloaded.append(partition)
        if holdsUnloads { await withCheckedContinuation { heldUnloads.append($0) } }
    }

    func summaries(of partition: String) throws -> [StoredChangesetSummary] {
        loaded.append(partition)
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
