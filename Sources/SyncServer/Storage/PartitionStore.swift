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
/// **Shared stores.** A store may be shared by several servers (front ends) that each serve clients of
/// the same partitions, as `PostgresPartitionStore` in `Integrations/PostgresSync` is. Then a server's
/// in-memory view of a partition can trail the store's log, and the store tells the server so:
///
/// - `append` refuses versions that do not directly follow the log's last entry by throwing
///   `PartitionStoreConflict`, writing nothing. The server then reads the entries it lacks with
///   `summaries(of:after:)`, drops the uploaded changesets those entries already hold (a client's
///   re-upload through another front end is idempotent), and appends the rest under the next versions.
/// - `appendNotifications()` streams the latest version of partitions other writers appended to; the
///   server reads the new entries of the partitions it serves and sends them to its bound sessions.
///
/// A store used by one server only needs neither: the default `summaries(of:after:)` filters
/// `summaries(of:)`, and the default `appendNotifications()` is `nil`.
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

    /// The entries of the partition's log after server version `version` without their bytes, in
    /// server-version order: `version + 1, version + 2, …` up to the log's last entry (empty when the log
    /// ends at or before `version`).
    ///
    /// The server calls it to catch up with entries others appended (after a `PartitionStoreConflict`
    /// or an `AppendNotification`) and checks that the versions follow `version` without a gap.
    func summaries(of partition: String, after version: UInt64) async throws -> [StoredChangesetSummary]

    /// The entries with server versions in `versions` (all of which were appended before), in order.
    func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset]

    /// Appends `changesets` (consecutive server versions following the log's last entry as this server
    /// knows it) to the partition's log. They must be durable when it returns.
    ///
    /// If the log already holds an entry with the first of those versions (another writer appended), it
    /// throws `PartitionStoreConflict` and writes nothing. If it throws anything else, the server
    /// considers them not written: it reports a storage failure to the uploader and, later, appends other
    /// changesets under the same versions (a shared store whose write did happen after all answers that
    /// with `PartitionStoreConflict`).
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

    /// A new stream of the appends to this store by any writer, or `nil` (the default) for a store that
    /// only this server writes.
    ///
    /// Each call returns a stream of its own (several servers may share one store object); the store
    /// ends it when the consumer stops iterating. An element says that `partition`'s log reached
    /// `latestVersion`; elements may repeat, arrive out of order, or name the server's own appends — a
    /// server reads the summaries after what it holds and ignores an element that is not ahead of it.
    /// When the store may have missed appends (a lost connection to a database), it sends, once it
    /// knows again, an element for every partition whose log moved meanwhile.
    func appendNotifications() -> AsyncStream<AppendNotification>?

    /// The identity of the partition's log: a random non-zero number the store creates with the log (the
    /// first time it is asked, for a partition never written) and keeps with it durably. A log that loses
    /// history — a store emptied, or one replaced by another — comes back with another identity, and the
    /// server refuses clients that hold the old one with `clientResetRequired` (`historyLost`).
    ///
    /// The server reads it with the summaries. The default implementation returns 0: such a store keeps
    /// no identity, and the server then checks only what the log itself shows (a client past the log's
    /// end, or holding acknowledgements of client versions the log lacks).
    func historyID(of partition: String) async throws -> UInt64

    /// How many partitions the store holds (each one `summaries` or `historyID` was ever called for), or
    /// `nil` when the store does not count them (the default): the server's `maximumPartitionsInStore` is
    /// then not enforced. The server asks once, before it creates its first partition, and counts the ones
    /// it creates from then on. A store shared by several servers, whose count moves under each of them,
    /// enforces its own cap where it creates partitions and throws `PartitionCreationRefused` from
    /// `summaries(of:)` or `historyID(of:)` past it (the server refuses that bind as past its own count).
    func partitionCount() async throws -> Int?

    /// Whether the store holds `partition` — whether loading it finds a log rather than creates one. The
    /// server asks before it loads a partition that a read-only credential binds, and, when it enforces
    /// `maximumPartitionsInStore`, before it loads any partition. The default answers whether the
    /// partition's `summaries` are not empty (for a store that creates nothing when reading).
    func holdsPartition(_ partition: String) async throws -> Bool

    /// Whether the store keeps each entry's `origin` and `duplicateOf` (`StoredChangeset`) durably and gives
    /// them back from `summaries` and `read`. Only then does the server integrate each origin once (an
    /// upload of a changeset the log holds under the same origin is appended as a duplicate, delivered to
    /// other clients empty); with a store that does not (the default, `false`), it appends every upload as
    /// before protocol version 7: a changeset recovered twice by client resets is in the log twice.
    var storesChangesetOrigins: Bool { get }

    /// The server stopped using `partition` for now (no session is bound to it, nothing is in progress):
    /// release what is held for it (open files…). The partition's log must stay intact; the next call
    /// for it is `summaries`. The default does nothing.
    func unload(_ partition: String) async
}

extension PartitionStore {
    /// 0: the store keeps no identity for its logs.
    public func historyID(of partition: String) async throws -> UInt64 { 0 }
    public func clientFileRecords(of partition: String) async throws -> [ClientFileRecord] { [] }
    public func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) async throws {}

    /// `summaries(of:)`, without the entries up to `version`.
    public func summaries(of partition: String, after version: UInt64) async throws -> [StoredChangesetSummary] {
        try await summaries(of: partition).filter { $0.serverVersion > version }
    }

    /// `nil`: the store does not count its partitions.
    public func partitionCount() async throws -> Int? { nil }

    /// Whether the partition's log has entries.
    public func holdsPartition(_ partition: String) async throws -> Bool {
        try await !summaries(of: partition).isEmpty
    }

    /// `nil`: only this server writes the store.
    public func appendNotifications() -> AsyncStream<AppendNotification>? { nil }

    /// `false`: the store keeps no origins, and the server appends every upload.
    public var storesChangesetOrigins: Bool { false }

    /// Does nothing: a store that holds nothing per partition need not release anything.
    public func unload(_ partition: String) async {}
}
