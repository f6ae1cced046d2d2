/// Why bytes could not be decoded as a wire message (or a part of one).
///
/// Every decoding failure is one of these; decoding never traps on hostile input.
public enum WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input ended early: a read needed `needed` bytes but only `available` were left. Also thrown,
    /// before anything is allocated, when a declared length or element count promises more bytes than
    /// remain.
    case truncated(needed: Int, available: Int)
    /// A length prefix declared `Int` bytes, more than the caller's `limit` for that field.
    case lengthTooLarge(Int, limit: Int)
    /// A string field's bytes are not valid UTF-8.
    case invalidUTF8
    /// The first byte of a message is not a message type this decoder knows. Decoding a server message
    /// as a client message (or the reverse) also lands here.
    case unknownMessageType(UInt8)
    /// An enum field's tag byte is not a case of the named type (e.g. `"WireCredential"`).
    case unknownTag(String, UInt8)
    /// The message was complete but `Int` bytes followed it.
    case trailingBytes(Int)
    /// The input was `Int` bytes long, more than the decoder's `limit`; nothing was decoded.
    case messageTooLarge(Int, limit: Int)
    /// A field held a value its type does not allow (an unknown `ProtocolErrorCode`, a presence flag other
    /// than 0 or 1); the text says which.
    case invalidValue(String)

    /// A one-line explanation naming the numbers involved.
    public var description: String {
        switch self {
        case .truncated(let needed, let available):
            "truncated input: needed \(needed) more byte(s) but only \(available) remain"
        case .lengthTooLarge(let length, let limit):
            "declared length \(length) exceeds the limit of \(limit) bytes"
        case .invalidUTF8:
            "string field is not valid UTF-8"
        case .unknownMessageType(let type):
            "unknown message type 0x\(hex(type))"
        case .unknownTag(let typeName, let tag):
            "unknown \(typeName) tag 0x\(hex(tag))"
        case .trailingBytes(let count):
            "\(count) unexpected byte(s) after the end of the message"
        case .messageTooLarge(let size, let limit):
            "message of \(size) bytes exceeds the limit of \(limit) bytes"
        case .invalidValue(let explanation):
            "invalid value: \(explanation)"
        }
    }
}

/// Two lowercase hex digits.
private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return byte < 0x10 ? "0" + digits : digits
}
