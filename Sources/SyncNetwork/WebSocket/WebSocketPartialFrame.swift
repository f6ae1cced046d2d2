/// A large frame whose header arrived before all of its payload. Its payload is gathered here as it is
/// read, straight from the loop's read buffer, instead of passing through the channel's input buffer: each
/// byte is copied once on its way from the socket to the frame, instead of into the input (whose growth
/// and compaction copy it again) and then out of it into the frame.
///
/// The payload's storage is reserved for the whole frame when the header arrives; only the bytes received
/// so far are written (and counted against the listener's input budget), so a peer that announces a large
/// frame and stalls holds address space, not memory.
struct WebSocketPartialFrame {
    /// A frame takes this path when its payload is at least this long and not all of it has arrived.
    static let minimumPayloadLength = 64 * 1024

    let header: WebSocketFrameHeader
    /// The payload's bytes received so far (still masked, for a frame from a client).
    private(set) var payload: [UInt8]

    /// A frame of `header` whose payload begins with `received`.
    init(header: WebSocketFrameHeader, received: ArraySlice<UInt8>) {
        self.header = header
        payload = []
        payload.reserveCapacity(header.payloadLength)
        payload.append(contentsOf: received.prefix(header.payloadLength))
    }

    /// The payload's bytes still to come.
    var missing: Int { header.payloadLength - payload.count }

    /// Appends the payload's next bytes from the start of `bytes` (at most `missing`); returns how many it
    /// took (the rest belong to the frames after this one).
    mutating func take(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = min(bytes.count, missing)
        payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
        return count
    }

    /// The whole frame, unmasked in place; its payload is moved out (this value holds none afterwards).
    /// Only once `missing` is 0.
    mutating func takeFrame() -> WebSocketFrame {
        precondition(missing == 0, "a partial frame taken before its payload arrived")
        var whole: [UInt8] = []
        swap(&whole, &payload)
        header.unmask(&whole)
        return header.frame(payload: whole)
    }
}
