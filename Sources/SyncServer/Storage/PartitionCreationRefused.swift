/// A store refuses to create a partition it does not hold: loading it (`PartitionStore.summaries(of:)`,
/// `historyID(of:)`) would add one beyond what the store allows. Nothing was created.
///
/// A store throws it when it enforces a cap on its partitions itself — atomically where several servers
/// share it, as `PostgresPartitionStore` does with `maximumPartitions`, so that front ends that each count
/// only their own creations (`SyncServer.Configuration.maximumPartitionsInStore`) cannot together pass
/// the cap. The server refuses the bind that loaded the partition as it refuses one past its own count:
/// `permissionDenied` for that session (fatal, not retried; `reason` is the message), not the
/// `internalError` retried later that other store errors become. Partitions the store holds must still load.
public struct PartitionCreationRefused: Error, Sendable, Hashable, CustomStringConvertible {
    /// The partition that was not created.
    public var partition: String
    /// Why, for the client and the log: e.g. "the server holds at most 100 partitions and creates no more".
    public var reason: String

    /// A refusal to create `partition`, because of `reason`.
    public init(partition: String, reason: String) {
        self.partition = partition
        self.reason = reason
    }

    /// The reason and the partition: "<reason>: <partition> is not created".
    public var description: String { "\(reason): \(partition) is not created" }
}
