/// What a credential may do with a partition it may bind.
enum PartitionPermission: Comparable, Sendable {
    /// Bind a partition the store holds and download it; uploads are refused, and a partition the store
    /// does not hold is not created.
    case read
    /// Bind, download and upload, creating the partition when the store does not hold it.
    case write
}

/// The partitions an authenticated connection may bind, and what it may do with each: exact names and
/// name prefixes, each read-only or read-write.
struct PartitionAccess: Sendable {
    /// Partitions allowed by exact name (byte for byte, like every partition name: `PartitionName`).
    let names: [PartitionName: PartitionPermission]
    /// Partitions allowed by prefix (an empty prefix allows every partition).
    let prefixes: [(prefix: String, permission: PartitionPermission)]

    /// Every partition, read-write.
    static let all = PartitionAccess(names: [:], prefixes: [("", .write)])

    /// The marker that makes a pattern read-only (`read:shared/*`).
    static let readMarker = "read:"
    /// The marker that makes a pattern read-write, as a pattern without a marker is (`write:read:x` grants
    /// the partition named `read:x`).
    static let writeMarker = "write:"

    /// The access that `patterns` grant: each an exact partition name, or a prefix followed by `*`
    /// (`"*"` alone: every partition), read-write unless it starts with `read:`. A `*` anywhere but at the
    /// end is part of an exact name. A partition several patterns match gets the widest permission.
    init(patterns: Set<String>) {
        var names: [PartitionName: PartitionPermission] = [:]
        var prefixes: [(String, PartitionPermission)] = []
        for marked in patterns {
            var pattern = Substring(marked)
            var permission = PartitionPermission.write
            if pattern.utf8.starts(with: Self.readMarker.utf8) {
                pattern = pattern.dropFirst(Self.readMarker.count)
                permission = .read
            } else if pattern.utf8.starts(with: Self.writeMarker.utf8) {
                pattern = pattern.dropFirst(Self.writeMarker.count)
            }
            if pattern.hasSuffix("*") {
                prefixes.append((String(pattern.dropLast()), permission))
            } else {
                let name = PartitionName(String(pattern))
                names[name] = max(names[name] ?? permission, permission)
            }
        }
        self.init(names: names, prefixes: prefixes)
    }

    private init(
        names: [PartitionName: PartitionPermission], prefixes: [(prefix: String, permission: PartitionPermission)]
    ) {
        self.names = names
        self.prefixes = prefixes
    }

    /// What may be done with `partition`: the widest permission of the patterns it matches (its bytes
    /// equal a name's or start with a prefix's), or `nil` when it may not be bound.
    func permission(for partition: String) -> PartitionPermission? {
        var permission = names[PartitionName(partition)]
        for (prefix, granted) in prefixes where partition.utf8.starts(with: prefix.utf8) {
            permission = max(permission ?? granted, granted)
        }
        return permission
    }

    /// Whether `partition` may be bound at all.
    func allows(_ partition: String) -> Bool { permission(for: partition) != nil }
}
