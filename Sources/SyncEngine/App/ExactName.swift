/// A partition name as a dictionary key, compared and hashed by its exact UTF-8 bytes.
///
/// Swift's `String ==` folds canonically equivalent spellings ("caf\u{E9}" and "cafe\u{301}" are equal),
/// while store files are named by bytes and the server tells the two apart: keyed by `String`, two
/// spellings would share one session in memory and two stores on disk. Keyed by `ExactName`, they are
/// two partitions everywhere.
struct ExactName: Hashable, Sendable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (lhs: ExactName, rhs: ExactName) -> Bool { lhs.name.utf8.elementsEqual(rhs.name.utf8) }

    func hash(into hasher: inout Hasher) {
        for byte in name.utf8 { hasher.combine(byte) }
    }
}
