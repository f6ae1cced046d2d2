/// A `PartitionStore` that keeps logs in memory, for tests and the embedded server.
///
/// Logs (and the records about client files) live as long as the store: several servers created one after
/// another with the same store instance see the same logs (a "restart" that keeps the data). Never throws.
public actor InMemoryPartitionStore: PartitionStore {
    /// By exact name (`PartitionName`: NFC and NFD spellings are two partitions).
    private var logs: [PartitionName: [StoredChangeset]] = [:]
    private var clientFiles: [PartitionName: [ClientFileRecord]] = [:]
    private var historyIDs: [PartitionName: UInt64] = [:]
    /// Every partition read or written: the ones the store holds.
    private var held: Set<PartitionName> = []

    /// An empty store.
    public init() {}

    /// The entries are kept whole, with their origins and duplicate marks.
    public nonisolated var storesChangesetOrigins: Bool { true }

    public func summaries(of partition: String) -> [StoredChangesetSummary] {
        held.insert(PartitionName(partition))
        return (logs[PartitionName(partition)] ?? []).map(\.summary)
    }

    /// The entries in `versions`; versions that were never appended are left out.
    public func read(_ versions: ClosedRange<UInt64>, of partition: String) -> [StoredChangeset] {
        guard let log = logs[PartitionName(partition)], !log.isEmpty, versions.lowerBound >= 1 else { return [] }
        let lower = Int(clamping: versions.lowerBound) - 1
        let upper = min(Int(clamping: versions.upperBound), log.count)
        guard lower < upper else { return [] }
        return Array(log[lower..<upper])
    }

    /// Appends `changesets` to the partition's log as given.
    public func append(_ changesets: [StoredChangeset], to partition: String) {
        held.insert(PartitionName(partition))
        logs[PartitionName(partition), default: []].append(contentsOf: changesets)
    }

    public func clientFileRecords(of partition: String) -> [ClientFileRecord] {
        clientFiles[PartitionName(partition)] ?? []
    }

    public func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) {
        clientFiles[PartitionName(partition), default: []].append(contentsOf: records)
    }

    /// A random non-zero identity created with the partition's log, kept as long as the store: another
    /// store (a server that lost its memory) gives the same partition another one.
    public func historyID(of partition: String) -> UInt64 {
        if let id = historyIDs[PartitionName(partition)] { return id }
        let id = UInt64.random(in: 1...UInt64.max)
        held.insert(PartitionName(partition))
        historyIDs[PartitionName(partition)] = id
        return id
    }

    /// The partitions whose summaries, log or identity were asked for or appended to.
    public func partitionCount() -> Int? { held.count }

    /// Whether the partition's summaries, log or identity were asked for or appended to.
    public func holdsPartition(_ partition: String) -> Bool { held.contains(PartitionName(partition)) }

    /// The partition's whole log (a test helper).
    public func log(of partition: String) -> [StoredChangeset] { logs[PartitionName(partition)] ?? [] }
}
