/// A frame's header as `WebSocketFrameDecoder` read and checked it: what the frame is, how long its header
/// and payload are, and the key its payload is masked with (frames from a client).
struct WebSocketFrameHeader {
    let isFinal: Bool
    let opcode: WebSocketOpcode
    /// The masking key (RFC 6455 §5.3); `nil` for an unmasked frame (from a server).
    let maskingKey: (UInt8, UInt8, UInt8, UInt8)?
    /// The header's bytes on the wire, the masking key included.
    let size: Int
    /// The payload's bytes (at most the decoder's `maximumMessageBytes`; 125 for a control frame).
    let payloadLength: Int

    /// Unmasks `payload`, the frame's whole payload as received (a no-op for an unmasked frame).
    func unmask(_ payload: inout [UInt8]) {
        guard let maskingKey else { return }
        payload.withUnsafeMutableBytes { WebSocketMask.apply(maskingKey, to: $0) }
    }

    /// The bytes the whole frame takes on the wire: its header and its payload.
    var frameSize: Int { size + payloadLength }

    /// The frame with its (unmasked) `payload`.
    func frame(payload: [UInt8]) -> WebSocketFrame {
        WebSocketFrame(isFinal: isFinal, opcode: opcode, payload: payload)
    }

    /// The frame this header begins at `start` in `buffer`, its payload copied out and unmasked, or `nil`
    /// while not all its payload is in `buffer`.
    func frame(in buffer: [UInt8], headerAt start: Int) -> WebSocketFrame? {
        let payloadStart = start + size
        guard buffer.count - payloadStart >= payloadLength else { return nil }
        var payload = Array(buffer[payloadStart..<(payloadStart + payloadLength)])
        unmask(&payload)
        return frame(payload: payload)
    }
}
