/// The standard CRC-32 checksum (IEEE 802.3: polynomial 0x04C11DB7 reflected as 0xEDB88320, initial value
/// and final XOR 0xFFFFFFFF), as used by zlib, PNG and Ethernet.
public enum CRC32 {
    /// The byte-at-a-time lookup table for the reflected polynomial.
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
        }
        return crc
    }

    /// The CRC-32 of `bytes`: `checksum(Array("123456789".utf8)) == 0xCBF43926`, and 0 for no bytes.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { checksum($0) }
    }

    /// The CRC-32 of the bytes in `buffer` (used to check records in place while recovering).
    static func checksum(_ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        table.withUnsafeBufferPointer { table in
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in buffer {
                crc = (crc >> 8) ^ table[Int((crc ^ UInt32(byte)) & 0xFF)]
            }
            return crc ^ 0xFFFF_FFFF
        }
    }
}
