/// Standard Base64 (RFC 4648 §4, with padding), for the WebSocket handshake's keys.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` in Base64.
    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int((triple >> 18) & 63)])
            output.append(alphabet[Int((triple >> 12) & 63)])
            output.append(remaining > 1 ? alphabet[Int((triple >> 6) & 63)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes, or `nil` when it is not padded standard Base64.
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index < characters.count {
            var values: [UInt32] = []
            var padding = 0
            for offset in 0..<4 {
                let character = characters[index + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only at the end of the last group, and at most two.
                    guard index + 4 == characters.count, offset >= 2 else { return nil }
                    padding += 1
                    values.append(0)
                } else {
                    guard padding == 0, let value = alphabet.firstIndex(of: character) else { return nil }
                    values.append(UInt32(value))
                }
            }
            let triple = values[0] << 18 | values[1] << 12 | values[2] << 6 | values[3]
            output.append(UInt8((triple >> 16) & 0xFF))
            if padding < 2 { output.append(UInt8((triple >> 8) & 0xFF)) }
            if padding < 1 { output.append(UInt8(triple & 0xFF)) }
            index += 4
        }
        return output
    }
}
