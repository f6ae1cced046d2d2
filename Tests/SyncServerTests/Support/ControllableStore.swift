import SyncServer

/// A `PartitionStore` in memory whose loads and appends can be made to fail.
actor ControllableStore: PartitionStore {
    struct Failure: Error {}

    private var logs: [String: [StoredChangeset]] = [:]
    var failsLoads = false
    var failsAppends = false

    init(logs: [String: [StoredChangeset]] = [:]) { self.logs = logs }

    func setFailures(loads: Bool, appends: Bool) {
        failsLoads = loads
        failsAppends = appends
    }

    func load(partition: String) throws -> [StoredChangeset] {
        if failsLoads { throw Failure() }
        return logs[partition] ?? []
    }

    func append(_ changesets: [StoredChangeset], to partition: String) throws {
        if failsAppends { throw Failure() }
        logs[partition, default: []].append(contentsOf: changesets)
    }
}
