/// A partition log the store returned is unusable.
public struct PartitionLogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The partition whose log is broken.
    public var partition: String
    /// The version the server expected at the first bad entry (its position in the log, from 1).
    public var expectedServerVersion: UInt64
    /// The version the store returned there.
    public var foundServerVersion: UInt64

    /// An error for `partition` whose entry at position `expectedServerVersion` had `foundServerVersion`.
    public init(partition: String, expectedServerVersion: UInt64, foundServerVersion: UInt64) {
        self.partition = partition
        self.expectedServerVersion = expectedServerVersion
        self.foundServerVersion = foundServerVersion
    }

    /// A one-line explanation.
    public var description: String {
        "the stored log of partition \(partition) has version \(foundServerVersion) "
            + "where \(expectedServerVersion) belongs"
    }
}
