/// Where a `SyncServer` keeps partition logs.
///
/// The server reads a partition's `summaries` once (the first time a session binds it or it is inspected;
/// again after a failed attempt, or after it evicted the partition) and from then on keeps them in memory
/// and calls `append` for each integrated upload. It `read`s the bytes of entries when it sends them, so a
/// store need not keep them in memory. For any one partition the server never overlaps `summaries`,
/// `append` or `unload` with another of these; `read`s of versions already appended may run at any time,
/// concurrently with each other and with an `append`, but never with `unload`.
///
/// When a partition has been idle for a while the server evicts it and calls `unload`: the store may then
/// close what it holds open for the partition. The next use starts with `summaries` again.
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

    /// The server stopped using `partition` for now (no session is bound to it, nothing is in progress):
    /// release what is held for it (open files…). The partition's log must stay intact; the next call
    /// for it is `summaries`. The default does nothing.
    func unload(_ partition: String) async
}

extension PartitionStore {
    /// Does nothing: a store that holds nothing per partition need not release anything.
    public func unload(_ partition: String) async {}
}
