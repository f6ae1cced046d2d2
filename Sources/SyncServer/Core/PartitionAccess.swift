/// The partitions an authenticated connection may bind: exact names and name prefixes.
struct PartitionAccess: Sendable {
    /// Partitions allowed by exact name.
    let names: Set<String>
    /// Partitions allowed by prefix (an empty prefix allows every partition).
    let prefixes: [String]

    /// Every partition.
    static let all = PartitionAccess(names: [], prefixes: [""])

    /// The access that `patterns` grant: each an exact partition name, or a prefix followed by `*`
    /// (`"*"` alone: every partition). A `*` anywhere but at the end is part of an exact name.
    init(patterns: Set<String>) {
        var names: Set<String> = []
        var prefixes: [String] = []
        for pattern in patterns {
            if pattern.hasSuffix("*") {
                prefixes.append(String(pattern.dropLast()))
            } else {
                names.insert(pattern)
            }
        }
        self.init(names: names, prefixes: prefixes.sorted())
    }

    private init(names: Set<String>, prefixes: [String]) {
        self.names = names
        self.prefixes = prefixes
    }

    /// Whether `partition` may be bound.
    func allows(_ partition: String) -> Bool {
        names.contains(partition) || prefixes.contains { partition.hasPrefix($0) }
    }
}
