/// A `PartitionStore.append` found the partition's log ahead of the versions it was given: another
/// writer (a front end sharing the store) appended first. Nothing was written.
///
/// The server answers it by reading the entries it lacks (`summaries(of:after:)`) and retrying with the
/// versions after them, without the uploaded changesets those entries already hold.
public struct PartitionStoreConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The partition appended to.
    public var partition: String
    /// The server version of the log's last entry when the append was refused.
    public var latestVersion: UInt64

    /// A conflict on `partition`, whose log ends at `latestVersion`.
    public init(partition: String, latestVersion: UInt64) {
        self.partition = partition
        self.latestVersion = latestVersion
    }

    /// A one-line explanation.
    public var description: String {
        "the log of partition \(partition) already reaches version \(latestVersion): another writer appended"
    }
}
