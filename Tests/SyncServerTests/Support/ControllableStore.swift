import SyncServer

/// A `PartitionStore` in memory whose reads of summaries, reads of entries and appends can be made to fail,
/// that records the partitions it loaded and unloaded, and can hold unloads until released, and reads of
/// entries and appends until released with an outcome (a database that stops answering, then fails).
actor ControllableStore: PartitionStore {
    struct Failure: Error {}

    private var logs: [String: [StoredChangeset]] = [:]
    var failsLoads = false
    var failsReads = false
    var failsAppends = false
    /// Every partition whose summaries were read, in order.
    private(set) var loaded: [String] = []
    /// The changesets of every call of `append`, in order (recorded when it starts, whether it then fails).
    private(set) var appendCalls: [[StoredChangeset]] = []
    /// Every partition unloaded, in order (recorded when the unload starts).
    private(set) var unloaded: [String] = []
    private var holdsUnloads = false
    private var heldUnloads: [CheckedContinuation<Void, Never>] = []
    private var holdsReads = false
    private var holdsAppends = false
    /// Held reads of entries and appends, each resumed with whether it fails.
    private var heldReads: [CheckedContinuation<Bool, Never>] = []
    private var heldAppends: [CheckedContinuation<Bool, Never>] = []

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

    /// While `reads` (`appends`), reads of entries (appends) wait, before doing anything, until released.
    func setHolds(reads: Bool, appends: Bool) {
        holdsReads = reads
        holdsAppends = appends
    }

    /// How many reads of entries, and how many appends, wait to be released.
    var heldReadCount: Int { heldReads.count }
    var heldAppendCount: Int { heldAppends.count }

    /// Lets the waiting reads of entries go on: each throws if `failing`, else reads.
    func releaseHeldReads(failing: Bool) {
        let held = heldReads
        heldReads = []
        for read in held { read.resume(returning: failing) }
    }

    /// Lets the waiting appends go on: each throws (storing nothing) if `failing`, else appends.
    func releaseHeldAppends(failing: Bool) {
        let held = heldAppends
        heldAppends = []
        for append in held { append.resume(returning: failing) }
    }

    func unload(_ partition: String) async {
        unloaded.append(partition)
        if holdsUnloads { await withCheckedContinuation { heldUnloads.append($0) } }
    }

    func summaries(of partition: String) throws -> [StoredChangesetSummary] {
        loaded.append(partition)
        if failsLoads { throw Failure() }
        return (logs[partition] ?? []).map(\.summary)
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        if holdsReads, await withCheckedContinuation({ heldReads.append($0) }) { throw Failure() }
        if failsReads { throw Failure() }
        return (logs[partition] ?? []).filter { versions.contains($0.serverVersion) }
    }

    func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        appendCalls.append(changesets)
        if holdsAppends, await withCheckedContinuation({ heldAppends.append($0) }) { throw Failure() }
        if failsAppends { throw Failure() }
        logs[partition, default: []].append(contentsOf: changesets)
    }
}
