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
        var bytes = header(opcode: opcode, length: payload.count, maskingKey: maskingKey)
        if !isFinal { bytes[0] &= 0x7F }
        let start = bytes.count
        bytes.append(contentsOf: payload)
        if let key = maskingKey {
            bytes.withUnsafeMutableBytes { buffer in
                WebSocketMask.apply(key, to: UnsafeMutableRawBufferPointer(rebasing: buffer[start...]))
            }
        }
        return bytes
    }

    /// The header of a final frame of `opcode` with a payload of `length` bytes, masked with `maskingKey`
    /// if given: send it followed by the payload (masked in place with `WebSocketMask` by a client). Saves
    /// copying a large payload into a frame.
    static func header(opcode: WebSocketOpcode, length: Int, maskingKey: (UInt8, UInt8, UInt8, UInt8)?) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | opcode.rawValue]
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch length {
        case 0...125:
            bytes.append(maskBit | UInt8(length))
        case 126...0xFFFF:
            bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift)))
            }
        }
        if let key = maskingKey { bytes += [key.0, key.1, key.2, key.3] }
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
