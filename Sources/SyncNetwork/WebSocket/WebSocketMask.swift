/// XORs bytes with a WebSocket masking key (RFC 6455 §5.3), eight bytes at a time.
enum WebSocketMask {
    /// Masks (or unmasks: the same operation) `bytes` in place with `key`, the key's first byte applying
    /// to `bytes`' first byte.
    static func apply(_ key: (UInt8, UInt8, UInt8, UInt8), to bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let keyBytes = [key.0, key.1, key.2, key.3]
        var word: UInt64 = 0
        for index in 0..<8 { word |= UInt64(keyBytes[index & 3]) << UInt64(8 * index) }
        let wideCount = bytes.count / 8
        for index in 0..<wideCount {
            let pointer = base + index * 8
            let value = pointer.loadUnaligned(as: UInt64.self)
            // The key repeats every 4 bytes, so a little-endian 8-byte word always starts with key byte 0.
            pointer.storeBytes(of: value ^ word.littleEndian, as: UInt64.self)
        }
        for index in (wideCount * 8)..<bytes.count {
            bytes[index] ^= keyBytes[index & 3]
        }
    }
}
