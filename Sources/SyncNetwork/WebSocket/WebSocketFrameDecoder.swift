/// Cuts WebSocket frames out of received bytes and checks each against RFC 6455 §5 before anything is
/// allocated for its payload.
///
/// Refused, with the close code to fail the connection with:
/// - reserved bits set (no extension is negotiated), an unknown opcode, a 64-bit length with its top bit
///   set, a masked frame sent to a client or an unmasked one sent to a server: 1002;
/// - a control frame (close, ping, pong) that is fragmented or longer than 125 bytes: 1002;
/// - a frame whose payload alone exceeds `maximumMessageBytes`: 1009 (found from the header, before its
///   payload is read or allocated).
///
/// - with `refusesText`, a text frame: 1003, from its first byte.
///
/// Message-level rules (continuations, UTF-8, the total size of a fragmented message) belong to
/// `WebSocketMessageAssembler`.
struct WebSocketFrameDecoder {
    /// Which side reads: a server requires masked frames, a client unmasked ones.
    enum Reader { case server, client }

    let reader: Reader
    var maximumMessageBytes: Int
    /// Whether a text frame is refused (1003) as soon as its first byte arrived.
    var refusesText = false

    init(reader: Reader, maximumMessageBytes: Int, refusesText: Bool = false) {
        self.reader = reader
        self.maximumMessageBytes = maximumMessageBytes
        self.refusesText = refusesText
    }

    /// The first frame at the start of `buffer[start...]` with the number of bytes it takes, or `nil` when
    /// more bytes are needed.
    func decode(
        _ buffer: [UInt8], from start: Int
    ) throws(WebSocketViolation) -> (frame: WebSocketFrame, consumed: Int)? {
        guard let header = try header(in: buffer, from: start),
            let frame = header.frame(in: buffer, headerAt: start)
        else { return nil }
        return (frame, header.frameSize)
    }

    /// The header of the first frame at the start of `buffer[start...]`, checked as the type's
    /// documentation says, or `nil` when more bytes are needed for it (its payload may still be on its way).
    /// `buffer` is indexed from 0 (an array, or the loop's read buffer).
    func header<Bytes: RandomAccessCollection<UInt8>>(
        in buffer: Bytes, from start: Int
    ) throws(WebSocketViolation) -> WebSocketFrameHeader? where Bytes.Index == Int {
        let available = buffer.count - start
        guard available >= 1 else { return nil }
        if refusesText, buffer[start] & 0x0F == WebSocketOpcode.text.rawValue {
            throw WebSocketViolation(code: .unsupportedData, reason: "text messages are not part of the sync protocol")
        }
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        guard first & 0x70 == 0 else { throw WebSocketViolation(code: .protocolError, reason: "reserved bits set") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketViolation(code: .protocolError, reason: "unknown opcode \(first & 0x0F)")
        }
        let isFinal = first & 0x80 != 0
        let isMasked = second & 0x80 != 0
        switch (reader, isMasked) {
        case (.server, false): throw WebSocketViolation(code: .protocolError, reason: "an unmasked frame from a client")
        case (.client, true): throw WebSocketViolation(code: .protocolError, reason: "a masked frame from a server")
        default: break
        }
        var headerSize = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerSize = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + index]) }
            guard length >> 63 == 0 else {
                throw WebSocketViolation(code: .protocolError, reason: "a length with its top bit set")
            }
            headerSize = 10
        }
        if opcode.isControl {
            guard isFinal else { throw WebSocketViolation(code: .protocolError, reason: "a fragmented control frame") }
            guard length <= 125 else {
                throw WebSocketViolation(
                    code: .protocolError, reason: "a control frame of \(length) bytes (at most 125)")
            }
        } else if length > UInt64(maximumMessageBytes) {
            throw WebSocketViolation(
                code: .messageTooBig, reason: "a frame of \(length) bytes; messages are at most \(maximumMessageBytes)")
        }
        var maskingKey: (UInt8, UInt8, UInt8, UInt8)?
        if isMasked {
            guard available >= headerSize + 4 else { return nil }
            maskingKey = (
                buffer[start + headerSize], buffer[start + headerSize + 1], buffer[start + headerSize + 2],
                buffer[start + headerSize + 3]
            )
            headerSize += 4
        }
        return WebSocketFrameHeader(
            isFinal: isFinal, opcode: opcode, maskingKey: maskingKey, size: headerSize, payloadLength: Int(length))
    }
}
