import SyncStorage
import TestSupport
import Testing

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
}
