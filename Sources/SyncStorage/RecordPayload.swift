/// A record's payload in two parts, stored one after the other: a small `prefix` (a record type, a few
/// numbers) and a `body` (a changeset's bytes). Appending one writes the body from its own storage, and
/// reading one back can put the body in an array of its own, so a large body is never copied to put a few
/// bytes in front of it or to take them off again.
public struct RecordPayload: Sendable, Hashable {
    /// The first bytes of the payload.
    public var prefix: [UInt8]
    /// The rest of the payload.
    public var body: [UInt8]

    public init(prefix: [UInt8] = [], body: [UInt8]) {
        self.prefix = prefix
        self.body = body
    }

    /// The payload's length: `prefix.count + body.count`.
    public var count: Int { prefix.count + body.count }

    /// The payload as one array (a copy).
    public var bytes: [UInt8] { prefix + body }
}
