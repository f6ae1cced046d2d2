/// The partitions an authenticated connection may bind.
enum PartitionAccess: Sendable {
    /// Every partition.
    case all
    /// Only these.
    case only(Set<String>)

    /// Whether `partition` may be bound.
    func allows(_ partition: String) -> Bool {
        switch self {
        case .all: true
        case .only(let partitions): partitions.contains(partition)
        }
    }
}
