// libFuzzer target: WebSocket frames as a server and as a client reads them, each through a message
// assembler with small limits (fragment count, fragment size, message size). Compiled together with the
// SyncNetwork WebSocket sources (see Fuzz/run.sh). Invariants: nothing crashes or traps; a decoded frame
// never consumes more bytes than it was given; an assembled message is never larger than the limit; a frame
// gathered as a `WebSocketPartialFrame` (its header, then its payload in pieces, as the channel reads a
// large frame) is the frame `decode` returns, and takes no byte beyond it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameDecoder(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    for reader in [WebSocketFrameDecoder.Reader.server, .client] {
        for refusesText in [false, true] {
            let decoder = WebSocketFrameDecoder(reader: reader, maximumMessageBytes: 4096, refusesText: refusesText)
            var assembler = WebSocketMessageAssembler(
                maximumMessageBytes: 4096, maximumFragments: 8, minimumFragmentBytes: 2)
            var offset = 0
            do {
                while let (frame, consumed) = try decoder.decode(bytes, from: offset) {
                    precondition(consumed > 0 && offset + consumed <= bytes.count)
                    checkPartialFrame(frame, bytes[offset..<(offset + consumed)], decoder: decoder, pieces: count)
                    offset += consumed
                    if case .binary(let message) = try assembler.take(frame) { precondition(message.count <= 4096) }
                }
            } catch {
                _ = error.code  // a typed violation: the connection would be failed with its code
            }
        }
    }
    return 0
}

/// Decodes the header of `wire` (one whole frame, as `decode` found it) and gathers its payload through a
/// `WebSocketPartialFrame` in pieces whose sizes come from `seed`, the last followed by bytes that belong to
/// the next frame: the result must be `frame`, and the frame must never offer room for a byte of the next one.
func checkPartialFrame(
    _ frame: WebSocketFrame, _ wire: ArraySlice<UInt8>, decoder: WebSocketFrameDecoder, pieces seed: Int
) {
    let bytes = Array(wire)
    guard let header = try? decoder.header(in: bytes, from: 0) else { preconditionFailure("a decoded frame's header") }
    precondition(header.size + header.payloadLength == bytes.count)
    let firstPiece = min(header.payloadLength, seed % 7)
    var partial = WebSocketPartialFrame(header: header, received: bytes[header.size..<(header.size + firstPiece)])
    var offset = header.size + firstPiece
    var step = seed % 5 + 1
    while partial.missing > 0 {
        let end = min(bytes.count, offset + step)
        // The read that ends the frame may carry the next frame's first bytes.
        let piece = Array(bytes[offset..<end]) + (end == bytes.count ? [0xEE, 0xEE] : [])
        // As a read does: fills the start of the space the frame offers, never more than it.
        let taken = partial.receive { missing in
            let count = min(piece.count, missing.count)
            piece.withUnsafeBytes { missing.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            return (count, count)
        }
        precondition(taken == end - offset, "a partial frame offered room for a byte of the next frame")
        offset = end
        step = step * 3 % 11 + 1
    }
    precondition(partial.takeFrame() == frame, "a frame gathered in pieces differs from the decoded one")
}
