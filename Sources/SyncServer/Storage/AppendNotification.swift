/// An element of `PartitionStore.appendNotifications()`: `partition`'s log reached `latestVersion`.
///
/// It carries no bytes: a server that serves the partition reads the summaries it lacks from the store and
/// its sessions' pumps read the bytes as they send them.
public struct AppendNotification: Sendable, Hashable {
    /// The partition appended to.
    public var partition: String
    /// The server version of the partition's last entry after the append.
    public var latestVersion: UInt64

    /// A notification that `partition`'s log reached `latestVersion`.
    public init(partition: String, latestVersion: UInt64) {
        self.partition = partition
        self.latestVersion = latestVersion
    }
}
