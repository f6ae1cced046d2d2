/// File names for partitions, shared by the client's local stores and the server's file store.
///
/// The mapping is injective and safe on every file system the package runs on:
/// - lowercase ASCII letters, digits, `-` and `_` stay as they are; an uppercase letter becomes `^` and
///   its lowercase form, so names that differ only in case map to names that differ in more than case
///   (`Tasks` → `^tasks`, `tasks` → `tasks`: distinct on case-insensitive APFS and NTFS too);
/// - every other byte of the UTF-8 name (`/`, `.`, `%`, `^`, NUL, non-ASCII, …) becomes `%` and two
///   lowercase hex digits, so no name can climb out of its directory or be hidden;
/// - a name whose encoding would be longer than `maximumEncodedLength` keeps a readable prefix and adds `~`
///   and the SHA-256 of the whole name in hex, which no one can make collide.
package enum StoreFileName {
    /// Longest encoded name (before the extension); the result stays under the usual 255-byte limit.
    package static let maximumEncodedLength = 180

    /// The file name for `partition`, with `suffix` (e.g. `".synclog"`) appended.
    package static func forPartition(_ partition: String, suffix: String) -> String {
        var encoded = ""
        for byte in partition.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "_"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                encoded += "^"
                encoded.unicodeScalars.append(Unicode.Scalar(byte + 32))
            default:
                encoded += "%" + hex(byte)
            }
        }
        if encoded.isEmpty { encoded = "%" }  // the empty name (no partition is empty; never a bare suffix)
        if encoded.utf8.count > maximumEncodedLength {
            let digest = SHA256.hash(Array(partition.utf8)).map(hex).joined()
            encoded = String(encoded.prefix(maximumEncodedLength - 65)) + "~" + digest
        }
        return encoded + suffix
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        return String(String.UnicodeScalarView([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]))
    }
}
