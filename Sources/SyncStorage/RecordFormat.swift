/// The byte layout of a record log file, version 3 (see `docs/Storage.md`).
///
/// ```
/// file    = header record*
/// header  = "SSLOG" (5 bytes)  version: u16 LE = 3  flags: u8 = 0  salt: u64 LE              (16 bytes)
/// record  = marker: u8 = 0xA5  flags: u8  length: u32 LE  batch: u64 LE  checksum: u32 LE
///           headerCheck: u32 LE  payload                                           (22 bytes + payload)
///           flags       = 1 for the last record of its batch (the batch's commit), else 0
///           batch       = the offset of the first record of the record's batch
///           checksum    = CRC-32(salt LE ‖ length LE ‖ payload)
///           headerCheck = CRC-32(salt LE ‖ marker ‖ flags ‖ length LE ‖ batch LE ‖ checksum LE)
/// ```
///
/// Why each part: the marker is never zero, so the zero-filled tail a power loss can leave on ext4, XFS
/// or APFS never reads as records; the checksum covers the length as well as the payload; the header
/// check lets a scan recognise a record's start from 22 bytes, without reading the payload, which is what
/// makes telling a torn tail from corruption in the middle of the file affordable.
///
/// A batch (one `append`, one fsync) is written in one go, but after a power loss its pages may have
/// reached the disk in any order. `batch` and the commit flag let the scan tell them apart from damage:
/// a record carrying `batch = b` was written only after everything before `b` had been fsynced, so a bad
/// record is a torn write only when every intact record after it belongs to its own (the final) batch,
/// and the final batch is kept only when its commit record and every record before it are intact.
///
/// The random per-file `salt` is mixed into both CRCs, so the bytes of another log's records (or of an
/// older version's) inside a payload never read as records of this file.
public enum RecordFormat {
    /// The file's first bytes: `"SSLOG"`, then the version, then flags.
    public static let magic: [UInt8] = Array("SSLOG".utf8)
    /// The version this build writes and reads (version 2 files are read once, to convert them).
    public static let version: UInt16 = 3
    /// The file header's size.
    public static let fileHeaderSize = 16
    /// Bytes in front of each record's payload.
    public static let recordHeaderSize = 22
    /// The first byte of every record.
    public static let marker: UInt8 = 0xA5
    /// The record flag of a batch's last record.
    static let commitFlag: UInt8 = 1

    /// How version 1 files began (`"SSLOG1"`, then byte 1): recognised only to refuse them by version.
    static let legacyHeader: [UInt8] = Array("SSLOG1".utf8) + [1]
    /// The file header of a version 2 file (8 bytes, no salt); its records had a 13-byte header.
    static let version2Header: [UInt8] = magic + [2, 0, 0]

    /// The 16-byte file header with `salt`.
    static func fileHeader(salt: UInt64) -> [UInt8] {
        var header = magic + [UInt8(version & 0xFF), UInt8(version >> 8), 0]
        withUnsafeBytes(of: salt.littleEndian) { header.append(contentsOf: $0) }
        return header
    }

    static func load(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    static func load64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(load(bytes, at: offset)) | UInt64(load(bytes, at: offset + 4)) << 32
    }

    static func store(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
        bytes[offset] = UInt8(value & 0xFF)
        bytes[offset + 1] = UInt8((value >> 8) & 0xFF)
        bytes[offset + 2] = UInt8((value >> 16) & 0xFF)
        bytes[offset + 3] = UInt8(value >> 24)
    }

    static func store64(_ value: UInt64, in bytes: inout [UInt8], at offset: Int) {
        store(UInt32(truncatingIfNeeded: value), in: &bytes, at: offset)
        store(UInt32(truncatingIfNeeded: value >> 32), in: &bytes, at: offset + 4)
    }
}

/// What a record header says.
struct RecordHeader: Equatable {
    var length: UInt32
    var checksum: UInt32
    /// The offset of the first record of the record's batch.
    var batch: UInt64
    /// Whether the record is its batch's last.
    var commit: Bool
}

/// Encodes and checks the records of one file: the current version with the file's salt, or version 2
/// (read only, to convert a file), whose records have no batch (each one reads as a batch of its own).
struct RecordCodec: Sendable {
    /// The file's format version: 3, or 2 for reading an old file.
    let version: UInt16
    /// The running CRC after the salt: where both checksums start.
    private let seed: UInt32

    /// The codec of a version 3 file with `salt`.
    init(salt: UInt64) {
        version = RecordFormat.version
        seed = withUnsafeBytes(of: salt.littleEndian) { CRC32.update(CRC32.start, $0) }
    }

    private init(version2: Void) {
        version = 2
        seed = CRC32.start
    }

    /// Version 2's codec: marker, length, checksum, header check; no salt.
    static let version2 = RecordCodec(version2: ())

    /// Bytes in front of each payload.
    var headerSize: Int { version == 2 ? 13 : RecordFormat.recordHeaderSize }
    /// Bytes of the file header.
    var fileHeaderSize: Int { version == 2 ? 8 : RecordFormat.fileHeaderSize }

    /// The CRC-32 of the part of a payload after its first `prefix.count` bytes (`CRC32.checksum(body)`), from
    /// the record's `checksum` (checked) and `length`, without reading the body: CRC-32 is linear, so the
    /// checksum of salt ‖ length ‖ prefix ‖ body is that of salt ‖ length ‖ prefix carried over the body's
    /// `bodyCount` bytes, combined with the body's own (`CRC32.finish(_:followedBy:byteCount:)`, which is its
    /// own inverse in the body's checksum).
    func bodyChecksum(checksum: UInt32, length: UInt32, prefix: UnsafeRawBufferPointer, bodyCount: Int) -> UInt32 {
        let running = withUnsafeBytes(of: length.littleEndian) { CRC32.update(CRC32.update(seed, $0), prefix) }
        return CRC32.finish(running, followedBy: checksum, byteCount: bodyCount)
    }

    /// The checksum of a payload given in two parts.
    func checksum(length: UInt32, parts first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> UInt32 {
        let running = withUnsafeBytes(of: length.littleEndian) { CRC32.update(seed, $0) }
        return CRC32.finish(CRC32.update(CRC32.update(running, first), second))
    }

    /// The checksum of a payload.
    func checksum(length: UInt32, payload: UnsafeRawBufferPointer) -> UInt32 {
        checksum(length: length, parts: payload, UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// The header of a record whose payload is `prefix` followed by `body` (version 3 only). With
    /// `bodyChecksum` (`CRC32.checksum` of `body`), the body is not read: the record's checksum is carried
    /// over it from that value.
    func recordHeader(
        prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, bodyChecksum: UInt32? = nil, batch: UInt64,
        commit: Bool
    ) -> [UInt8] {
        let length = UInt32(prefix.count + body.count)
        var header = [UInt8](repeating: 0, count: RecordFormat.recordHeaderSize)
        header[0] = RecordFormat.marker
        header[1] = commit ? RecordFormat.commitFlag : 0
        RecordFormat.store(length, in: &header, at: 2)
        RecordFormat.store64(batch, in: &header, at: 6)
        let checksum: UInt32
        if let bodyChecksum {
            let running = withUnsafeBytes(of: length.littleEndian) { CRC32.update(CRC32.update(seed, $0), prefix) }
            checksum = CRC32.finish(running, followedBy: bodyChecksum, byteCount: body.count)
        } else {
            checksum = self.checksum(length: length, parts: prefix, body)
        }
        RecordFormat.store(checksum, in: &header, at: 14)
        let check = header.withUnsafeBytes {
            CRC32.finish(CRC32.update(seed, UnsafeRawBufferPointer(rebasing: $0[0..<18])))
        }
        RecordFormat.store(check, in: &header, at: 18)
        return header
    }

    /// What the record header at the start of `bytes` (at least `headerSize` of them) at file offset
    /// `offset` says, if it is one; `nil` when the marker, the flags or the header check is wrong. A
    /// version 2 record is its own batch, and its batch's commit.
    func parseHeader(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> RecordHeader? {
        guard bytes.count >= headerSize, bytes[0] == RecordFormat.marker else { return nil }
        if version == 2 {
            let length = RecordFormat.load(bytes, at: 1)
            let checksum = RecordFormat.load(bytes, at: 5)
            let check = CRC32.finish(CRC32.update(seed, UnsafeRawBufferPointer(rebasing: bytes[0..<9])))
            guard RecordFormat.load(bytes, at: 9) == check else { return nil }
            return RecordHeader(length: length, checksum: checksum, batch: offset, commit: true)
        }
        guard bytes[1] & ~RecordFormat.commitFlag == 0 else { return nil }
        let check = CRC32.finish(CRC32.update(seed, UnsafeRawBufferPointer(rebasing: bytes[0..<18])))
        guard RecordFormat.load(bytes, at: 18) == check else { return nil }
        return RecordHeader(
            length: RecordFormat.load(bytes, at: 2), checksum: RecordFormat.load(bytes, at: 14),
            batch: RecordFormat.load64(bytes, at: 6), commit: bytes[1] == RecordFormat.commitFlag)
    }
}

/// The checked checksum of a record a `RecordLog` visits as it opens, from which the CRC-32 of the part of
/// its payload after a prefix is found without reading that part again (`body(of:afterPrefix:)`).
public struct RecordChecksum: Sendable {
    let codec: RecordCodec
    let length: UInt32
    let checksum: UInt32

    /// `CRC32.checksum` of `payload`'s bytes after the first `prefixLength` (`payload` is the record's payload
    /// as visited): only the prefix is read, whatever the body's size.
    public func body(of payload: UnsafeRawBufferPointer, afterPrefix prefixLength: Int) -> UInt32 {
        let prefix = UnsafeRawBufferPointer(rebasing: payload[0..<min(prefixLength, payload.count)])
        return codec.bodyChecksum(
            checksum: checksum, length: length, prefix: prefix, bodyCount: payload.count - prefix.count)
    }
}
