/// A `PartitionStore` that keeps logs in memory, for tests and the embedded server.
///
/// Logs live as long as the store: several servers created one after another with the same store
/// instance see the same logs (a "restart" that keeps the data). Never throws.
public actor InMemoryPartitionStore: PartitionStore {
    private var logs: [String: [StoredChangeset]] = [:]

    /// An empty store.
    public init() {}

    /// The partition's log; empty when nothing was appended to it.
    public func load(partition: String) -> [StoredChangeset] {
        logs[partition] ?? []
    }

    /// Appends `changesets` to the partition's log as given.
    public func append(_ changesets: [StoredChangeset], to partition: String) {
        logs[partition, default: []].append(contentsOf: changesets)
    }
}
