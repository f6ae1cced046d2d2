/// The first byte of every encoded message. Client messages use 0x01…, server messages 0x81…, so a
/// message sent the wrong way is rejected as `.unknownMessageType`.
enum MessageType {
    static let hello: UInt8 = 0x01
    static let bind: UInt8 = 0x02
    static let upload: UInt8 = 0x03
    static let unbind: UInt8 = 0x04
    static let ping: UInt8 = 0x05
    static let mark: UInt8 = 0x06
    /// A `bind` that names `Bind.checkpoint` (protocol version 6): the fields of `bind`, then the checkpoint.
    /// A `bind` without one keeps type `bind`, so every message has exactly one encoding and a version 4 or 5
    /// client's `bind` is unchanged.
    static let bindWithCheckpoint: UInt8 = 0x07
    /// An `upload` in which at least one changeset names `UploadChangeset.origin` (protocol version 7): the
    /// fields of `upload`, then `u32 count` (at least 1) and that many `u32 index` (of the changeset in the
    /// upload, strictly increasing), `u64 clientFileID`, `u64 clientVersion`. An upload without origins keeps
    /// type `upload`.
    static let uploadWithOrigins: UInt8 = 0x08
    /// A `bind` whose checkpoint covers the prefix of the log (`LogCheckpoint.coversPrefix`, protocol version
    /// 8): the same fields as `bindWithCheckpoint`, the digest being the prefix digest.
    static let bindWithPrefixCheckpoint: UInt8 = 0x09

    static let welcome: UInt8 = 0x81
    static let download: UInt8 = 0x82
    static let unbound: UInt8 = 0x83
    static let pong: UInt8 = 0x84
    static let error: UInt8 = 0x85
    static let marked: UInt8 = 0x86
    /// A `download` that names at least one duplicate acknowledgement (`Download.acknowledgedDuplicates`,
    /// protocol version 9): the fields of `download`, then `u32 count` (at least 1) and that many `u64`
    /// server versions of its `.acknowledged` entries, strictly increasing. A download without duplicates
    /// keeps type `download`, so an older client never receives this type.
    static let downloadWithDuplicates: UInt8 = 0x87
}

/// Tag bytes of `WireCredential`.
enum CredentialTag {
    static let anonymous: UInt8 = 0
    static let apiKey: UInt8 = 1
}

/// Tag bytes of `DownloadEntry`.
enum DownloadEntryTag {
    static let changeset: UInt8 = 0
    static let acknowledged: UInt8 = 1
}

extension WireProtocol {
    /// The default bound on an encoded message's size, in bytes (16 MiB): decoders reject longer input
    /// with `WireError.messageTooLarge` before reading it.
    public static let maximumMessageSize: Int = 16 * 1024 * 1024

    /// Bytes reserved for a message's framing around one changeset: enough for an `upload` or a `download`
    /// that carries a single changeset (the largest framing is a download's 30 bytes: type, session,
    /// entry count, entry tag, server version, length prefix, remaining bytes).
    public static let changesetFramingAllowance = 64

    /// The bytes an `UploadChangeset.origin` adds to an `upload` (protocol version 7): its changeset's index
    /// and its two fields.
    public static let uploadOriginSize = 4 + 8 + 8

    /// The bytes an `upload` that names at least one origin adds once: the count of origins.
    public static let uploadOriginCountSize = 4

    /// The largest changeset that fits, with its framing, into one message of `maximumMessageSize` bytes:
    /// the largest changeset a client may write and a server must accept.
    public static let maximumChangesetSize: Int = maximumChangesetSize(forMessageSize: maximumMessageSize)

    /// The largest changeset that fits, with its framing, into one message of `messageSize` bytes (0 when
    /// even an empty changeset would not fit).
    public static func maximumChangesetSize(forMessageSize messageSize: Int) -> Int {
        max(0, messageSize - changesetFramingAllowance)
    }
}

/// Sizes of length prefixes and fixed-width fields, for computing encoded sizes up front.
enum EncodedSize {
    static let lengthPrefix = 4
    static func string(_ s: String) -> Int { lengthPrefix + s.utf8.count }
    static func bytes(_ b: [UInt8]) -> Int { lengthPrefix + b.count }
    static let origin = WireProtocol.uploadOriginSize
    static let originCount = WireProtocol.uploadOriginCountSize
}

extension ByteWriter {
    /// Writes an optional's presence flag (0 absent, 1 present), then the value when present.
    mutating func writeOptional(_ v: UInt32?) {
        if let v {
            write(UInt8(1))
            write(v)
        } else {
            write(UInt8(0))
        }
    }

    /// An optional `u64` (protocol version 3's `Download.historyID`): a presence flag, then the value.
    mutating func writeOptional(_ v: UInt64?) {
        if let v {
            write(UInt8(1))
            write(v)
        } else {
            write(UInt8(0))
        }
    }
}

extension ByteReader {
    /// Reads an optional written by `writeOptional`: a presence flag that must be 0 or 1
    /// (`.invalidValue` otherwise), then the value when present.
    mutating func readOptionalUInt32() throws(WireError) -> UInt32? {
        switch try readUInt8() {
        case 0: return nil
        case 1: return try readUInt32()
        case let flag: throw .invalidValue("presence flag \(flag) (must be 0 or 1)")
        }
    }

    /// Reads an optional `u64` written by `writeOptional`.
    mutating func readOptionalUInt64() throws(WireError) -> UInt64? {
        switch try readUInt8() {
        case 0: return nil
        case 1: return try readUInt64()
        case let flag: throw .invalidValue("presence flag \(flag) (must be 0 or 1)")
        }
    }
}

extension ByteReader {
    /// The start of decoding a message: `.messageTooLarge` if `bytes` is longer than `maximumSize` (before
    /// reading anything), otherwise a reader positioned after the message's type byte, and that byte.
    static func message(_ bytes: [UInt8], maximumSize: Int) throws(WireError) -> (reader: ByteReader, type: UInt8) {
        guard bytes.count <= maximumSize else { throw .messageTooLarge(bytes.count, limit: maximumSize) }
        var reader = ByteReader(bytes)
        let type = try reader.readUInt8()
        return (reader, type)
    }
}
