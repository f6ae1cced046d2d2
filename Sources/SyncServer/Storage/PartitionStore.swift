/// Where a `SyncServer` keeps partition logs.
///
/// The server calls `load` at most once per partition (the first time a session binds to it or it is
/// inspected; again only after a failed load) and from then on keeps the log in memory and calls
/// `append` for each integrated upload. For any one partition the server never overlaps two calls: it
/// waits for each to return before the next.
public protocol PartitionStore: Sendable {
    /// The partition's whole log, in server-version order (empty for a partition never written).
    ///
    /// The server checks that the versions are 1, 2, 3, … and refuses to use a log that is not; it
    /// reports `.internalError` to the binding session in that case, as for a thrown error.
    func load(partition: String) async throws -> [StoredChangeset]

    /// Appends `changesets` (consecutive server versions following the log's last entry) to the
    /// partition's log. They must be durable when it returns. If it throws, the server considers them
    /// not written and will later append other changesets under the same versions.
    func append(_ changesets: [StoredChangeset], to partition: String) async throws
}
