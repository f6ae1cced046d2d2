/// A large frame whose header arrived before all of its payload. Its payload is gathered here as it is
/// read, straight from the socket into the frame's own storage (`receive`), instead of passing through the
/// loop's read buffer and the channel's input buffer: the kernel's copy is the only one. (The bytes that
/// arrived with the header, in the same read, are copied once: from the read buffer when the frame begins
/// a read, from the input otherwise.)
///
/// The payload's storage is allocated for the whole frame when the header arrives and is not filled in
/// advance; only the bytes received so far are written (and counted against the listener's input budget),
/// so a peer that announces a large frame and stalls holds address space, not memory.
struct WebSocketPartialFrame {
    /// A frame takes this path when its payload is at least this long and not all of it has arrived.
    static let minimumPayloadLength = 64 * 1024
    /// The most one read into a frame takes, as the loop's read buffer bounds other reads: a connection's
    /// large frame arrives in slices, with the listener's input budget checked after each and the loop's
    /// other connections served between them.
    static let maximumReadLength = 256 * 1024

    let header: WebSocketFrameHeader
    /// The whole payload's storage, `header.payloadLength` bytes, of which the first `received` are written
    /// (still masked, for a frame from a client). The rest is allocated, not written: `receive` writes it
    /// in order, and nothing reads the payload before `missing` is 0 (`takeFrame`). Bytes have
    /// no invalid values, so the array may count them before they are written.
    private var payload: [UInt8]
    /// The payload's bytes received so far.
    private(set) var received: Int

    /// A frame of `header` whose payload begins with `bytes` (those past the payload's end are not taken).
    init<Bytes: Collection<UInt8>>(header: WebSocketFrameHeader, received bytes: Bytes) {
        self.header = header
        let first = bytes.prefix(header.payloadLength)
        payload = [UInt8](unsafeUninitializedCapacity: header.payloadLength) { storage, initializedCount in
            _ = storage.initialize(fromContentsOf: first)
            initializedCount = header.payloadLength
        }
        received = first.count
    }

    /// The payload's bytes still to come.
    var missing: Int { header.payloadLength - received }

    /// Reads the payload's next bytes straight into its storage: `read` is given the part still missing
    /// (not empty while `missing` is above 0), writes from its start, and returns its result with how many
    /// bytes it wrote; those count as received. Returns `read`'s result.
    mutating func receive<Result>(
        _ read: (UnsafeMutableRawBufferPointer) -> (result: Result, written: Int)
    ) -> Result {
        let start = received
        let (result, written) = payload.withUnsafeMutableBytes { storage in
            read(UnsafeMutableRawBufferPointer(rebasing: storage[start...]))
        }
        precondition(written >= 0 && written <= missing, "a read past the frame's payload")
        received += written
        return result
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
