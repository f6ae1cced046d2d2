import SyncStorage
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
        var generator = SplitMix64(seed: seed)
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(CRC32.checksum(bytes) == RawFile.crc32Reference(bytes), "seed \(seed), length \(length)")
        }
    }
}

/// A deterministic generator (SplitMix64), so random inputs reproduce from their printed seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
