import TestSupport
import Testing

@testable import SyncStorage

@Suite struct CRC32Tests {
    @Test func knownVectors() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        #expect(CRC32.checksum([0]) == 0xD202_EF8D)
        #expect(CRC32.checksum(Array(repeating: 0xFF, count: 4)) == 0xFFFF_FFFF)
    }

    @Test("the sliced table-driven CRC matches the bit-at-a-time reference (seeded)", arguments: [UInt64(0x5EED_C3C3)])
    func matchesTheBitwiseReference(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(CRC32.checksum(bytes) == RawFile.crc32Reference(bytes), "seed \(seed), length \(length)")
        }
    }

    @Test(
        "buffers long enough for three lanes give the bit-at-a-time reference's CRC, from any running value (seeded)",
        arguments: [UInt64(0x1A_4E5)])
    func lanesMatchTheBitwiseReference(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let threshold = CRC32.laneThreshold
        for length in [threshold - 1, threshold, threshold + 7, threshold + 8, 65_536, 65_536 + 13, 100_003] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(CRC32.checksum(bytes) == RawFile.crc32Reference(bytes), "seed \(seed), length \(length)")
            // From a running value other than `start` (a record's checksum continues the salt and length).
            let head = Array(bytes[..<5])
            let running = head.withUnsafeBytes { CRC32.update(CRC32.start, $0) }
            let rest = bytes[5...].withUnsafeBytes { CRC32.finish(CRC32.update(running, $0)) }
            #expect(rest == RawFile.crc32Reference(bytes), "seed \(seed), length \(length), continued")
        }
    }

    @Test(
        "finish(_:followedBy:byteCount:) carries a running CRC over bytes known only by their checksum (seeded)",
        arguments: [UInt64(0xC0_3B1E)])
    func combinesWithoutTheBytes(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let lengths = Array(0..<70) + [255, 256, 4_096, 65_535, 65_536, 65_537, (1 << 20) + 3]
        for length in lengths {
            let prefix = bytes(Int.random(in: 0..<40, using: &generator))
            let body = bytes(length)
            let running = prefix.withUnsafeBytes { CRC32.update(CRC32.start, $0) }
            let direct = body.withUnsafeBytes { CRC32.finish(CRC32.update(running, $0)) }
            let combined = CRC32.finish(running, followedBy: CRC32.checksum(body), byteCount: body.count)
            #expect(combined == direct, "seed \(seed), prefix \(prefix.count), body \(length)")
        }
    }
}
