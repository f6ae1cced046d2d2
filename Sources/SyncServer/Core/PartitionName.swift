/// A partition name as a dictionary or set key: equal and hashed by its exact UTF-8 bytes.
///
/// Swift's `String` equality folds canonically equivalent spellings (`"caf\u{E9}"`, NFC, equals
/// `"cafe\u{301}"`, NFD), while a partition's files are named after its bytes (`StoreFileName`). Keying
/// the server's maps by `PartitionName` makes the two spellings two partitions everywhere, in memory as
/// on disk, so they never share a log that a restart would split.
struct PartitionName: Hashable, Sendable {
    /// The name as the client sent it.
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: PartitionName, rhs: PartitionName) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        let utf8 = string.utf8
        hasher.combine(utf8.count)
        let hashed: Void? = utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
    }
}
