// libFuzzer target: the sync wire codec. Any bytes decode to a client or server message or a typed
// error; a message that decodes re-encodes to bytes that decode to the same message.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireCodec(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    if let message = try? ClientMessage(decoding: bytes, maximumSize: 1 << 20) {
        precondition((try? ClientMessage(decoding: message.encoded(), maximumSize: 1 << 21)) == message)
    }
    if let message = try? ServerMessage(decoding: bytes, maximumSize: 1 << 20) {
        precondition((try? ServerMessage(decoding: message.encoded(), maximumSize: 1 << 21)) == message)
    }
    return 0
}
