/// One WebSocket frame, unmasked: what the decoder produces and the encoder consumes.
struct WebSocketFrame: Sendable, Equatable {
    var isFinal: Bool
    var opcode: WebSocketOpcode
    var payload: [UInt8]

    init(isFinal: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.isFinal = isFinal
        self.opcode = opcode
        self.payload = payload
    }

    /// The frame's bytes on the wire. Clients mask every frame with `maskingKey` (RFC 6455 §5.3);
    /// servers pass `nil` and never mask. Lengths use the shortest of the 7-, 16- and 64-bit forms.
    func encoded(maskingKey: (UInt8, UInt8, UInt8, UInt8)?) -> [UInt8] {
        Self.encode(isFinal: isFinal, opcode: opcode, payload: payload, maskingKey: maskingKey)
    }

    /// The bytes of a frame with `payload`, without building a `WebSocketFrame` first.
    static func encode(
        isFinal: Bool = true, opcode: WebSocketOpcode, payload: [UInt8], maskingKey: (UInt8, UInt8, UInt8, UInt8)?
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 14)
        bytes.append((isFinal ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch payload.count {
        case 0...125:
            bytes.append(maskBit | UInt8(payload.count))
        case 126...0xFFFF:
            bytes.append(maskBit | 126)
            bytes.append(UInt8(payload.count >> 8))
            bytes.append(UInt8(payload.count & 0xFF))
        default:
            bytes.append(maskBit | 127)
            let length = UInt64(payload.count)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        guard let key = maskingKey else {
            bytes.append(contentsOf: payload)
            return bytes
        }
        let mask = [key.0, key.1, key.2, key.3]
        bytes.append(contentsOf: mask)
        let start = bytes.count
        bytes.append(contentsOf: payload)
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<payload.count { buffer[start + index] ^= mask[index & 3] }
        }
        return bytes
    }

    /// A close frame's payload: the code, big-endian, then the UTF-8 reason (cut to fit 125 bytes).
    static func closePayload(_ code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var reasonBytes = Array(reason.utf8.prefix(123))
        // Never cut inside a UTF-8 sequence: drop continuation bytes left at the end, and their lead.
        while let last = reasonBytes.last, String(validating: reasonBytes, as: UTF8.self) == nil {
            _ = last
            reasonBytes.removeLast()
        }
        return [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + reasonBytes
    }
}
