/// The bytes of a partition's most recently appended entries, up to a byte budget: bound sessions that are
/// keeping up receive new entries from here instead of reading them back from the store.
struct RecentChangesets {
    let capacityBytes: Int
    private var data: [UInt64: [UInt8]] = [:]
    /// `CRC32.checksum` of kept entries whose upload computed it (`StoredChangeset.dataChecksum`).
    private var checksums: [UInt64: UInt32] = [:]
    private var order: [UInt64] = []
    private var head = 0
    private var bytes = 0

    init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

    /// Keeps `changeset`'s bytes, evicting the oldest entries beyond the budget (an entry larger than the
    /// whole budget is not kept).
    mutating func insert(_ changeset: StoredChangeset) {
        guard changeset.data.count <= capacityBytes else { return }
        data[changeset.serverVersion] = changeset.data
        checksums[changeset.serverVersion] = changeset.dataChecksum
        order.append(changeset.serverVersion)
        bytes += changeset.data.count
        while bytes > capacityBytes, head < order.count {
            if let evicted = data.removeValue(forKey: order[head]) { bytes -= evicted.count }
            checksums[order[head]] = nil
            head += 1
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// The bytes of `version`, if kept.
    func data(of version: UInt64) -> [UInt8]? { data[version] }

    /// `CRC32.checksum` of the bytes of `version`, if kept and known.
    func checksum(of version: UInt64) -> UInt32? { checksums[version] }
}
