/// A record's payload in two parts, stored one after the other: a small `prefix` (a record type, a few
/// numbers) and a `body` (a changeset's bytes). Appending one writes the body from its own storage, and
/// reading one back can put the body in an array of its own, so a large body is never copied to put a few
/// bytes in front of it or to take them off again.
///
/// A payload to append may carry its body's CRC-32 (`bodyChecksum`) when the caller has it already: the
/// record's checksum is then derived from it (`CRC32.finish(_:followedBy:byteCount:)`) instead of reading
/// the body a second time. It must be `CRC32.checksum(body)`: a wrong value makes the record read as damaged.
public struct RecordPayload: Sendable, Hashable {
    /// The first bytes of the payload.
    public var prefix: [UInt8]
    /// The rest of the payload.
    public var body: [UInt8]
    /// `CRC32.checksum(body)`, when known; not part of the payload's value (equality and hashing ignore it).
    public var bodyChecksum: UInt32?

    public init(prefix: [UInt8] = [], body: [UInt8], bodyChecksum: UInt32? = nil) {
        self.prefix = prefix
        self.body = body
        self.bodyChecksum = bodyChecksum
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.prefix == rhs.prefix && lhs.body == rhs.body }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(prefix)
        hasher.combine(body)
    }

    /// The payload's length: `prefix.count + body.count`.
    public var count: Int { prefix.count + body.count }

    /// The payload as one array (a copy).
    public var bytes: [UInt8] { prefix + body }
}
