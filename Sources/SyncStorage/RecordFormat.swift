/// The byte layout of a record log file, version 2 (see `docs/Storage.md`).
///
/// ```
/// file    = header record*
/// header  = "SSLOG" (5 bytes)  version: u16 LE = 2  flags: u8 = 0                      (8 bytes)
/// record  = marker: u8 = 0xA5  length: u32 LE  checksum: u32 LE  headerCheck: u32 LE  payload
///           checksum    = CRC-32(length LE ‖ payload)
///           headerCheck = CRC-32(marker ‖ length LE ‖ checksum LE)
/// ```
///
/// Why each part: the marker is never zero, so the zero-filled tail a power loss can leave on ext4, XFS
/// or APFS never reads as records; the checksum covers the length as well as the payload (and CRC-32's
/// initial value is not zero, so even an empty payload's checksum is not zero); the header check lets a
/// scan recognise a record's start from 13 bytes, without reading the payload, which is what makes telling
/// a torn tail from corruption in the middle of the file affordable.
public enum RecordFormat {
    /// The file's first bytes: `"SSLOG"`, then the version, then flags.
    public static let magic: [UInt8] = Array("SSLOG".utf8)
    /// The version this build writes and reads.
    public static let version: UInt16 = 2
    /// The file header's size.
    public static let fileHeaderSize = 8
    /// The file header of this version.
    public static let fileHeader: [UInt8] = magic + [UInt8(version & 0xFF), UInt8(version >> 8), 0]
    /// How version 1 files began (`"SSLOG1"`, then byte 1): recognised only to refuse them by version.
    static let legacyHeader: [UInt8] = Array("SSLOG1".utf8) + [1]
    /// The first byte of every record.
    public static let marker: UInt8 = 0xA5
    /// Bytes in front of each record's payload.
    public static let recordHeaderSize = 13

    /// The 13-byte header of a record whose payload is `prefix` followed by `body`.
    static func recordHeader(prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) -> [UInt8] {
        let length = UInt32(prefix.count + body.count)
        return recordHeader(length: length, checksum: checksum(length: length, parts: prefix, body))
    }

    private static func recordHeader(length: UInt32, checksum: UInt32) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: recordHeaderSize)
        header[0] = marker
        store(length, in: &header, at: 1)
        store(checksum, in: &header, at: 5)
        store(headerCheck(length: length, checksum: checksum), in: &header, at: 9)
        return header
    }

    /// CRC-32 of the length's little-endian bytes followed by the payload.
    static func checksum(length: UInt32, payload: UnsafeRawBufferPointer) -> UInt32 {
        let running = withUnsafeBytes(of: length.littleEndian) { CRC32.update(CRC32.start, $0) }
        return CRC32.finish(CRC32.update(running, payload))
    }

    /// CRC-32 of the length's little-endian bytes followed by a payload given in two parts.
    static func checksum(
        length: UInt32, parts first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer
    ) -> UInt32 {
        let running = withUnsafeBytes(of: length.littleEndian) { CRC32.update(CRC32.start, $0) }
        return CRC32.finish(CRC32.update(CRC32.update(running, first), second))
    }

    /// CRC-32 of the marker, the length and the checksum.
    static func headerCheck(length: UInt32, checksum: UInt32) -> UInt32 {
        var bytes = [marker]
        withUnsafeBytes(of: length.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.append(contentsOf: $0) }
        return CRC32.checksum(bytes)
    }

    /// What a record header at the start of `bytes` (at least 13 of them) says, if it is one: its payload
    /// length and checksum. `nil` when the marker or the header check is wrong.
    static func parseHeader(_ bytes: UnsafeRawBufferPointer) -> (length: UInt32, checksum: UInt32)? {
        guard bytes.count >= recordHeaderSize, bytes[0] == marker else { return nil }
        let length = load(bytes, at: 1)
        let checksum = load(bytes, at: 5)
        guard load(bytes, at: 9) == headerCheck(length: length, checksum: checksum) else { return nil }
        return (length, checksum)
    }

    static func load(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    static func store(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
        bytes[offset] = UInt8(value & 0xFF)
        bytes[offset + 1] = UInt8((value >> 8) & 0xFF)
        bytes[offset + 2] = UInt8((value >> 16) & 0xFF)
        bytes[offset + 3] = UInt8(value >> 24)
    }
}
