// libFuzzer target: WebSocket frames as a server and as a client reads them, each through a message
// assembler with small limits (fragment count, fragment size, message size). Compiled together with the
// SyncNetwork WebSocket sources (see Fuzz/run.sh). Invariants: nothing crashes or traps; a decoded frame
// never consumes more bytes than it was given; an assembled message is never larger than the limit.
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
