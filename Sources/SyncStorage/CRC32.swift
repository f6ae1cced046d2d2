#if canImport(CSyncStorage)
    import CSyncStorage
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The standard CRC-32 checksum (IEEE 802.3: polynomial 0x04C11DB7 reflected as 0xEDB88320, initial value
/// and final XOR 0xFFFFFFFF), as used by zlib, PNG and Ethernet.
public enum CRC32 {
    /// Slicing-by-8 tables: `tables[k * 256 + i]` is the CRC of byte `i` followed by `k` zero bytes, so
    /// eight bytes are folded in with eight independent lookups instead of a chain of eight dependent
    /// ones (about 5× faster than byte-at-a-time on 64 KB records; the checksum is the same).
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
            tables[index] = crc
        }
        for slice in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The CRC-32 (IEEE 802.3: reflected, polynomial 0xEDB88320, initial and final value 0xFFFFFFFF) of
    /// `bytes`. "123456789" gives 0xCBF43926; no bytes give 0.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum($0) }
    }

    static func checksum(_ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        finish(update(start, UnsafeRawBufferPointer(buffer)))
    }

    /// The running value a checksum starts from.
    static let start: UInt32 = 0xFFFF_FFFF

    /// The checksum of what was fed to `update` since `start`.
    static func finish(_ running: UInt32) -> UInt32 { running ^ 0xFFFF_FFFF }

    /// Feeds `raw` into a running checksum (`start`, or what an earlier `update` returned).
    ///
    /// With the processor's CRC instructions (`accelerator`) when it has them, else the table code
    /// (`softwareUpdate`); the same checksum either way.
    @inline(__always)
    static func update(_ running: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32 {
        hardwareUpdate(running, raw) ?? softwareUpdate(running, raw)
    }

    /// Which of the processor's instructions `update` checksums with.
    enum Accelerator: Sendable, Equatable {
        /// None: the table code (`softwareUpdate`).
        case table
        /// x86_64 with PCLMULQDQ and SSE 4.1: 64 bytes at a time folded by carry-less multiplication
        /// (`csyncstorage_crc32_fold`; the folding's math is in CSyncStorage's crc32.c), the last 16 bytes
        /// and the tail by the table code.
        case carrylessMultiply
        /// aarch64 with the ARMv8 CRC32 instructions (CRC32X/B, the IEEE polynomial): 8 bytes per instruction.
        case armCRC32
    }

    /// What this process's processor offers, chosen once. `SYNCSTREAMS_CRC32=table` in the environment
    /// forces the table code (to measure one against the other in the same binary).
    static let accelerator: Accelerator = {
        if let forced = getenv("SYNCSTREAMS_CRC32"), String(cString: forced) == "table" { return .table }
        #if canImport(CSyncStorage)
            if csyncstorage_crc32_fold_available() != 0 { return .carrylessMultiply }
            if csyncstorage_crc32_arm_available() != 0 { return .armCRC32 }
        #endif
        return .table
    }()

    /// Folding handles buffers of at least this many bytes (four 16-byte registers to start from); shorter
    /// ones go to the table code, where they cost a few lookups.
    static let foldThreshold = 64

    /// `raw` fed into `running` with the processor's instructions (`accelerator`), or `nil` when it has none
    /// this code uses (the caller then runs the table code).
    static func hardwareUpdate(_ running: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32? {
        #if canImport(CSyncStorage)
            switch accelerator {
            case .carrylessMultiply:
                guard raw.count >= foldThreshold, let base = raw.baseAddress else {
                    return softwareUpdate(running, raw)
                }
                // 16 bytes congruent to what was consumed (with `running` XORed in): their running value from 0
                // is the running value over the consumed bytes (see crc32.c).
                var folded: (UInt64, UInt64) = (0, 0)
                let consumed = withUnsafeMutableBytes(of: &folded) {
                    csyncstorage_crc32_fold(running, base, raw.count, $0.baseAddress)
                }
                let carried = withUnsafeBytes(of: &folded) { sliced(0, $0) }
                return sliced(carried, UnsafeRawBufferPointer(rebasing: raw[consumed...]))
            case .armCRC32:
                guard let base = raw.baseAddress else { return running }
                return csyncstorage_crc32_arm_update(running, base, raw.count)
            case .table:
                return nil
            }
        #else
            return nil
        #endif
    }

    /// `update` with the table code only (the fallback, and the reference the hardware paths are tested
    /// against).
    ///
    /// Slicing-by-8 folds 8 bytes per step, but each step waits for the previous one's table lookups. A
    /// buffer of `laneThreshold` bytes or more is therefore cut into three lanes checksummed side by side
    /// (three independent chains keep the loads busy: about 3× faster on 64 KB here), whose running values
    /// are then joined by linearity: `update(r, A‖B‖C) = r_A · x^(16L) ⊕ r_B · x^(8L) ⊕ r_C`, with `r_A` the
    /// running value over `A` from `r`, `r_B` and `r_C` over `B` and `C` from 0, and L the lanes' length.
    /// The checksum is the same.
    static func softwareUpdate(_ running: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32 {
        let lane = (raw.count / 3) & ~7
        guard lane * 3 >= laneThreshold else { return sliced(running, raw) }
        let joined = tables.withUnsafeBufferPointer { table in
            var first = running
            var second: UInt32 = 0
            var third: UInt32 = 0
            var offset = 0
            while offset < lane {
                first = step(first, raw, at: offset, table)
                second = step(second, raw, at: lane + offset, table)
                third = step(third, raw, at: 2 * lane + offset, table)
                offset += 8
            }
            let overLane = shift(1 << 31, byteCount: lane)  // x^(8L)
            return multiply(multiply(first, overLane), overLane) ^ multiply(second, overLane) ^ third
        }
        return sliced(joined, UnsafeRawBufferPointer(rebasing: raw[(3 * lane)...]))
    }

    /// Buffers at least this large are checksummed in three lanes (see `update`).
    static let laneThreshold = 12 * 1024

    /// `update` with one chain: 8 bytes per step, then the rest byte by byte.
    private static func sliced(_ running: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32 {
        tables.withUnsafeBufferPointer { table in
            var crc = running
            var offset = 0
            while offset + 8 <= raw.count {
                crc = step(crc, raw, at: offset, table)
                offset += 8
            }
            while offset < raw.count {
                crc = (crc >> 8) ^ table[Int((crc ^ UInt32(raw[offset])) & 0xFF)]
                offset += 1
            }
            return crc
        }
    }

    /// Folds the 8 bytes at `offset` into `crc` (slicing-by-8).
    @inline(__always)
    private static func step(
        _ crc: UInt32, _ raw: UnsafeRawBufferPointer, at offset: Int, _ table: UnsafeBufferPointer<UInt32>
    ) -> UInt32 {
        let one = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) ^ crc
        let two = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        return table[7 * 256 + Int(one & 0xFF)] ^ table[6 * 256 + Int((one >> 8) & 0xFF)]
            ^ table[5 * 256 + Int((one >> 16) & 0xFF)] ^ table[4 * 256 + Int(one >> 24)]
            ^ table[3 * 256 + Int(two & 0xFF)] ^ table[2 * 256 + Int((two >> 8) & 0xFF)]
            ^ table[1 * 256 + Int((two >> 16) & 0xFF)] ^ table[Int(two >> 24)]
    }

    /// `x^(2^k) mod P` for k = 0 … 66, in the reflected representation (bit 31 is x^0): squaring repeatedly
    /// gives `x^(8n)` for any byte count n in at most 64 products.
    private static let powers: [UInt32] = {
        var powers = [UInt32](repeating: 0, count: 67)
        powers[0] = 1 << 30  // x^1
        for k in 1..<67 { powers[k] = multiply(powers[k - 1], powers[k - 1]) }
        return powers
    }()

    /// `a · b mod P` for polynomials in the reflected representation.
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var product: UInt32 = 0
        var factor = b
        var bit: UInt32 = 1 << 31
        while bit != 0, a & (bit | (bit &- 1)) != 0 {
            if a & bit != 0 { product ^= factor }
            bit >>= 1
            factor = factor & 1 == 1 ? (factor >> 1) ^ 0xEDB8_8320 : factor >> 1
        }
        return product
    }

    /// `running · x^(8 · count) mod P`: what feeding `count` zero bytes does to a running value (from 0).
    private static func shift(_ running: UInt32, byteCount count: Int) -> UInt32 {
        var result = running
        var remaining = UInt64(count)
        var power = 3  // a byte is x^8 = x^(2^3)
        while remaining != 0 {
            if remaining & 1 == 1 { result = multiply(powers[power], result) }
            remaining >>= 1
            power += 1
        }
        return result
    }

    /// The checksum of what was fed to `update` since `start` followed by `count` bytes whose own
    /// checksum is `checksum`, without reading those bytes again: `finish(update(running, bytes))` for
    /// `bytes` with `checksum(bytes) == checksum`. CRC-32 is linear, so the running value is carried over the
    /// `count` bytes by a multiplication by `x^(8 · count)` mod P (at most 64 products of 32-bit
    /// polynomials, whatever `count` is).
    static func finish(_ running: UInt32, followedBy checksum: UInt32, byteCount count: Int) -> UInt32 {
        shift(running ^ 0xFFFF_FFFF, byteCount: count) ^ checksum
    }
}

extension CRC32 {
    /// The prefix digest D(n) of a log's versions 1…n (`LogCheckpoint.coversPrefix`, protocol version 8) from
    /// D(n − 1) (`previous`; D(0) = 0) and `checksum`, the CRC-32 of the changeset held at n: the CRC-32 of
    /// the 8 bytes `previous` (little-endian) ‖ `checksum` (little-endian). A changeset that differs at any
    /// version up to n changes D(n) (but for CRC collisions).
    public static func prefixDigest(after previous: UInt32, checksum: UInt32) -> UInt32 {
        withUnsafeBytes(of: (previous.littleEndian, checksum.littleEndian)) { finish(update(start, $0)) }
    }
}
