/// Where a `SyncServer` keeps partition logs.
///
/// The server reads a partition's `summaries` once (the first time a session binds it or it is inspected;
/// again only after a failed attempt) and from then on keeps them in memory and calls `append` for each
/// integrated upload. It `read`s the bytes of entries when it sends them, so a store need not keep them in
/// memory. For any one partition the server never overlaps `summaries` or `append` with another
/// `summaries` or `append`; `read`s of versions already appended may run at any time, concurrently with
/// each other and with an `append`.
///
/// Implementations must not block Swift's cooperative thread pool: do blocking file or network work on
/// threads of their own and resume the caller when done.
public protocol PartitionStore: Sendable {
    /// Every entry of the partition's log without its bytes, in server-version order (empty for a
    /// partition never written).
    ///
    /// The server checks that the versions are 1, 2, 3, … and refuses to use a log that is not; it
    /// reports `.internalError` to the binding session in that case, as for a thrown error.
    func summaries(of partition: String) async throws -> [StoredChangesetSummary]

    /// The entries with server versions in `versions` (all of which were appended before), in order.
    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset]

    /// Appends `changesets` (consecutive server versions following the log's last entry) to the
    /// partition's log. They must be durable when it returns. If it throws, the server considers them
    /// not written and will later append other changesets under the same versions.
    func append(_ changesets: [StoredChangeset], to partition: String) async throws

    /// The records about the partition's client files (`ClientFileRecord`), in the order they were
    /// appended. The server reads them once, with the summaries, when it runs with a maximum offline time.
    ///
    /// The default implementation returns none: such a store keeps nothing about client files, so after a
    /// restart the server counts every client file of the log as seen when it loaded the partition, and
    /// forgets none it had forgotten before (which is safe: it knows their last client versions from the
    /// log).
    func clientFileRecords(of partition: String) async throws -> [ClientFileRecord]

    /// Appends records about the partition's client files; they must be durable when it returns. Never
    /// overlaps another call for the same partition. The default implementation does nothing.
    func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) async throws
}

extension PartitionStore {
    public func clientFileRecords(of partition: String) async throws -> [ClientFileRecord] { [] }
    public func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) async throws {}
}
