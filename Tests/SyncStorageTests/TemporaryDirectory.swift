import Foundation

/// A fresh directory under /tmp (from `mkdtemp`), removed with its contents when released.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/SyncStorageTests.XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed: errno \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }
}

/// Raw access to a file's bytes, bypassing `RecordLog`, to simulate crashes and corruption.
enum RawFile {
    static func read(_ path: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func append(_ bytes: [UInt8], to path: String) throws {
        try write(read(path) + bytes, to: path)
    }

    /// The file header of format version 3 with `salt`.
    static func header(salt: UInt64) -> [UInt8] { Array("SSLOG".utf8) + [3, 0, 0] + littleEndian64(salt) }

    /// The salt in the header of the version 3 log at `path`.
    static func salt(_ path: String) -> UInt64 {
        read(path)[8..<16].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The file header of format version 2.
    static let headerV2: [UInt8] = Array("SSLOG".utf8) + [2, 0, 0]

    /// The on-disk form of one version 3 record, computed independently of the code under test: marker
    /// 0xA5, flags (1: commit), length, batch, CRC-32 of salt, length and payload, CRC-32 of salt and the
    /// header's first 18 bytes, payload.
    static func record(_ payload: [UInt8], salt: UInt64, batch: UInt64, commit: Bool) -> [UInt8] {
        let length = littleEndian(UInt32(payload.count))
        let checksum = littleEndian(crc32Reference(littleEndian64(salt) + length + payload))
        return recordHeader(length: length, checksum: checksum, salt: salt, batch: batch, commit: commit) + payload
    }

    /// A version 3 record header with the given (possibly false) length and checksum bytes.
    static func recordHeader(length: [UInt8], checksum: [UInt8], salt: UInt64, batch: UInt64, commit: Bool) -> [UInt8] {
        let front = [0xA5, commit ? 1 : 0] + length + littleEndian64(batch) + checksum
        return front + littleEndian(crc32Reference(littleEndian64(salt) + front))
    }

    /// One batch of version 3 records starting at file offset `start`: each names `start`, the last commits.
    static func batch(_ payloads: [[UInt8]], salt: UInt64, at start: Int) -> [UInt8] {
        payloads.enumerated().flatMap { index, payload in
            record(payload, salt: salt, batch: UInt64(start), commit: index == payloads.count - 1)
        }
    }

    /// The on-disk form of one version 2 record: marker 0xA5, length, CRC-32 of length and payload, CRC-32
    /// of the header's first 9 bytes, payload.
    static func recordV2(_ payload: [UInt8]) -> [UInt8] {
        let length = littleEndian(UInt32(payload.count))
        let checksum = littleEndian(crc32Reference(length + payload))
        let check = littleEndian(crc32Reference([0xA5] + length + checksum))
        return [0xA5] + length + checksum + check + payload
    }

    static func littleEndian64(_ value: UInt64) -> [UInt8] {
        littleEndian(UInt32(truncatingIfNeeded: value)) + littleEndian(UInt32(truncatingIfNeeded: value >> 32))
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// A bit-at-a-time CRC-32, independent of the table-driven one under test.
    static func crc32Reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
