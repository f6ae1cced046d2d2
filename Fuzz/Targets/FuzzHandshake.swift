// libFuzzer target: the HTTP upgrade parser, both sides — the server's answer to a request head, and
// the client's check of a response head — after the incremental head scan finds the end of the head.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandshake(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let head = WebSocketHandshake.headEnd(in: bytes[...]).map { bytes[..<$0] } ?? bytes[...]
    switch WebSocketHandshake.answer(request: head) {
    case .accept(let response): precondition(response.starts(with: Array("HTTP/1.1 101".utf8)))
    case .refuse(let response, _): precondition(!response.isEmpty)
    }
    _ = WebSocketHandshake.refusal(ofResponse: head, key: "dGhlIHNhbXBsZSBub25jZQ==")
    return 0
}
