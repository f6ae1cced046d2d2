/// The partitions an authenticated connection may bind: exact names and name prefixes.
struct PartitionAccess: Sendable {
    /// Partitions allowed by exact name (byte for byte, like every partition name: `PartitionName`).
    let names: Set<PartitionName>
    /// Partitions allowed by prefix (an empty prefix allows every partition).
    let prefixes: [String]

    /// Every partition.
    static let all = PartitionAccess(names: [], prefixes: [""])

    /// The access that `patterns` grant: each an exact partition name, or a prefix followed by `*`
    /// (`"*"` alone: every partition). A `*` anywhere but at the end is part of an exact name.
    init(patterns: Set<String>) {
        var names: Set<PartitionName> = []
        var prefixes: [String] = []
        for pattern in patterns {
            if pattern.hasSuffix("*") {
                prefixes.append(String(pattern.dropLast()))
            } else {
                names.insert(PartitionName(pattern))
            }
        }
        self.init(names: names, prefixes: prefixes.sorted())
    }

    private init(names: Set<PartitionName>, prefixes: [String]) {
        self.names = names
        self.prefixes = prefixes
    }

    /// Whether `partition` may be bound: its bytes equal a name's or start with a prefix's.
    func allows(_ partition: String) -> Bool {
        names.contains(PartitionName(partition)) || prefixes.contains { partition.utf8.starts(with: $0.utf8) }
    }
}
