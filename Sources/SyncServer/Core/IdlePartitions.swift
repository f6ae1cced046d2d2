/// The names of the partitions the core keeps loaded although nothing uses them, least recently used
/// first: what it evicts when more than `SyncServer.Configuration.maximumIdlePartitions` are idle.
///
/// `touch`, `remove` and `contains` are O(1); `removeOldest` is amortised O(1) (each use is stamped with
/// a rising number, and the scan for the oldest only moves forward).
struct IdlePartitions {
    private var stamps: [PartitionName: UInt64] = [:]
    private var names: [UInt64: String] = [:]
    private var nextStamp: UInt64 = 0
    /// No stamp below this one is still in use.
    private var oldestStamp: UInt64 = 0

    /// How many partitions are idle.
    var count: Int { stamps.count }

    func contains(_ name: String) -> Bool { stamps[PartitionName(name)] != nil }

    /// Records that `name` became idle now (the most recently used).
    mutating func touch(_ name: String) {
        remove(name)
        stamps[PartitionName(name)] = nextStamp
        names[nextStamp] = name
        nextStamp += 1
    }

    /// Forgets `name` (it is used again, or gone).
    mutating func remove(_ name: String) {
        guard let stamp = stamps.removeValue(forKey: PartitionName(name)) else { return }
        names.removeValue(forKey: stamp)
    }

    /// Removes and returns the least recently used name; `nil` when none is idle.
    mutating func removeOldest() -> String? {
        guard !stamps.isEmpty else { return nil }
        while oldestStamp < nextStamp {
            defer { oldestStamp += 1 }
            if let name = names.removeValue(forKey: oldestStamp) {
                stamps.removeValue(forKey: PartitionName(name))
                return name
            }
        }
        return nil
    }
}
