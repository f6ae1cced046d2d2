import TestSupport
import Testing

@testable import SyncStorage

#if canImport(Glibc)
    import Glibc
#endif

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

    // MARK: - The processor's CRC instructions (PCLMULQDQ folding on x86_64, CRC32X on aarch64)

    /// The accelerator this processor should get, from the flags /proc/cpuinfo lists (independently of the C
    /// shim's `cpuid` / `getauxval` checks); `nil` where there is no /proc/cpuinfo to read.
    private static func acceleratorFromCPUInfo() -> CRC32.Accelerator? {
        #if os(Linux)
            guard let file = fopen("/proc/cpuinfo", "r") else { return nil }
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 8_192)
            while fgets(&line, Int32(line.count), file) != nil {
                let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let flags = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
                #if arch(x86_64)
                    if text.hasPrefix("flags") {
                        return flags.contains("pclmulqdq") && flags.contains("sse4_1") ? .carrylessMultiply : .table
                    }
                #elseif arch(arm64)
                    if text.hasPrefix("Features") { return flags.contains("crc32") ? .armCRC32 : .table }
                #endif
            }
            return .table
        #else
            return nil
        #endif
    }

    @Test func theProcessorsInstructionsAreUsedWhenItHasThem() {
        guard let expected = Self.acceleratorFromCPUInfo() else { return }  // no /proc/cpuinfo to check against
        #expect(CRC32.accelerator == expected)
        let bytes = [UInt8](repeating: 0x5A, count: 256)
        let hardware = bytes.withUnsafeBytes { CRC32.hardwareUpdate(CRC32.start, $0) }
        #expect((hardware != nil) == (expected != .table))
    }

    @Test func knownValuesThroughTheHardwarePath() {
        // Check values from zlib's crc32 (an independent implementation), long enough to be folded.
        let digits = Array(String(repeating: "123456789", count: 100).utf8)
        let ramp = (0..<1_024).map { UInt8($0 & 0xFF) }
        let zeros = [UInt8](repeating: 0, count: 65_536)
        for (bytes, expected) in [(digits, UInt32(0x09FD_0FD7)), (ramp, 0xB70B_4C26), (zeros, 0xD797_8EEB)] {
            #expect(CRC32.checksum(bytes) == expected, "length \(bytes.count)")
            let hardware = bytes.withUnsafeBytes { CRC32.hardwareUpdate(CRC32.start, $0) }.map(CRC32.finish)
            #expect(hardware == nil || hardware == expected, "length \(bytes.count)")
        }
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        let short = Array("123456789".utf8).withUnsafeBytes { CRC32.hardwareUpdate(CRC32.start, $0) }
        #expect(short == nil || short.map(CRC32.finish) == 0xCBF4_3926)
    }

    @Test(
        "the hardware path gives the table code's running value for every length 0…1024 at 16 alignments, from start and from any running value (seeded)",
        arguments: [UInt64(0xC1C1_0A1D)])
    func hardwareMatchesTheTableCode(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let buffer = (0..<(1_024 + 16)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var mismatches = 0
        buffer.withUnsafeBytes { all in
            for alignment in 0..<16 {
                for length in 0...1_024 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[alignment..<(alignment + length)])
                    let running = length % 2 == 0 ? CRC32.start : UInt32.random(in: 0...UInt32.max, using: &generator)
                    let table = CRC32.softwareUpdate(running, slice)
                    let hardware = CRC32.hardwareUpdate(running, slice) ?? table
                    let dispatched = CRC32.update(running, slice)
                    if hardware != table || dispatched != table {
                        mismatches += 1
                        if mismatches <= 5 {
                            Issue.record(
                                "seed \(seed), alignment \(alignment), length \(length): table \(table), hardware \(hardware), update \(dispatched)"
                            )
                        }
                    }
                }
            }
            // The table code itself against the bit-at-a-time reference on a few of the same slices.
            for length in [0, 1, 63, 64, 65, 127, 128, 129, 1_000, 1_024] {
                let bytes = Array(all[3..<(3 + length)])
                #expect(CRC32.checksum(bytes) == RawFile.crc32Reference(bytes), "seed \(seed), length \(length)")
            }
        }
        #expect(mismatches == 0, "seed \(seed)")
    }

    @Test(
        "feeding a buffer in pieces of random sizes gives the checksum of the whole, through the hardware path (seeded)",
        arguments: [UInt64(0x5731_EA11), 0x0BAD_CAFE])
    func streamingMatchesOneShot(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let bytes = (0..<(200_000 + Int.random(in: 0..<64, using: &generator))).map { _ in
            UInt8.random(in: 0...255, using: &generator)
        }
        let expected = RawFile.crc32Reference(bytes)
        #expect(CRC32.checksum(bytes) == expected, "seed \(seed), one shot")
        for round in 0..<20 {
            var running = CRC32.start
            var offset = 0
            bytes.withUnsafeBytes { all in
                while offset < all.count {
                    // Mostly short and medium pieces (both sides of the fold threshold), sometimes a long one.
                    let limit = Int.random(in: 0..<10, using: &generator) == 0 ? 70_000 : 300
                    let count = min(Int.random(in: 0...limit, using: &generator), all.count - offset)
                    running = CRC32.update(running, UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)]))
                    offset += count
                }
            }
            #expect(CRC32.finish(running) == expected, "seed \(seed), round \(round)")
        }
    }
}
