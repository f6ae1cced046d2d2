#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a `WebSocketChannel` queued and has not written yet: whole frames (a header, then its payload's
/// chunks) and handshake text, in order, each chunk as it was given (a payload shared by many
/// connections stays shared; nothing is copied into one buffer).
///
/// `flush` gives the socket up to `maximumBuffersPerWrite` chunks per system call (a gathering write,
/// `sendmsg` with an `iovec` per chunk): a frame's header and payload go out in one call — one TCP segment
/// when they fit, not a small one for the header and then the payload — and a run of small frames (pongs,
/// acknowledgements, many downloads) costs one call per 64 chunks, not one per chunk. A partial write
/// resumes in the middle of its chunk.
struct WebSocketOutput {
    /// The most chunks given to one write (well below every system's `IOV_MAX`, 1,024 on Linux).
    static let maximumBuffersPerWrite = 64

    private struct Chunk {
        var bytes: [UInt8]
        /// Whether its bytes are reported to the delegate as written (frames of messages; not control
        /// frames or handshake text).
        var counted: Bool
    }

    /// How a `flush` ended.
    enum Stop: Equatable {
        /// Everything queued was written.
        case drained
        /// The socket takes no more now (or the write returned 0): wait until it is writable.
        case wouldBlock
        /// A write failed with this `errno`.
        case failed(Int32)
    }

    /// What a `flush` wrote and why it stopped.
    struct Flushed: Equatable {
        /// Bytes written, in all.
        var bytes = 0
        /// Of them, bytes of counted chunks.
        var counted = 0
        var stop = Stop.drained
    }

    private var chunks: [Chunk] = []
    private var head = 0
    /// How much of `chunks[head]` was written.
    private var offset = 0
    /// Bytes of chunks that are not counted (control frames, handshake text) queued and not written.
    private(set) var uncountedQueued = 0

    /// Whether nothing waits to be written.
    var isEmpty: Bool { head == chunks.count }

    /// Queues `bytes` after what is queued (empty ones are dropped: nothing to write).
    mutating func append(_ bytes: [UInt8], counted: Bool) {
        guard !bytes.isEmpty else { return }
        chunks.append(Chunk(bytes: bytes, counted: counted))
        if !counted { uncountedQueued += bytes.count }
    }

    /// Writes what is queued, in order, with `write` — given the next chunks (at most
    /// `maximumBuffersPerWrite`, the first from where an earlier partial write stopped) and returning what
    /// the system call did — until everything is written, the socket takes no more, or a write fails.
    mutating func flush(_ write: (UnsafeBufferPointer<iovec>) -> Socket.IOResult) -> Flushed {
        var flushed = Flushed()
        while head < chunks.count {
            let end = min(chunks.count, head + Self.maximumBuffersPerWrite)
            switch withBuffers(head..<end, write) {
            case .transferred(let count) where count > 0:
                flushed.bytes += count
                flushed.counted += consume(count)
            case .transferred, .wouldBlock, .endOfFile:
                flushed.stop = .wouldBlock
                return flushed
            case .failed(let code):
                flushed.stop = .failed(code)
                return flushed
            }
        }
        chunks.removeAll(keepingCapacity: chunks.capacity <= 256)
        head = 0
        offset = 0
        return flushed
    }

    /// Drops everything queued; returns how many counted bytes were never written.
    mutating func removeAll() -> Int {
        var unwritten = 0
        for (index, chunk) in chunks.enumerated().dropFirst(head) where chunk.counted {
            unwritten += chunk.bytes.count - (index == head ? offset : 0)
        }
        chunks = []
        head = 0
        offset = 0
        uncountedQueued = 0
        return unwritten
    }

    /// Marks `count` bytes from the head as written; returns how many of them were counted.
    private mutating func consume(_ count: Int) -> Int {
        var remaining = count
        var counted = 0
        while remaining > 0 {
            let taken = min(chunks[head].bytes.count - offset, remaining)
            if chunks[head].counted { counted += taken }
            remaining -= taken
            offset += taken
            if offset == chunks[head].bytes.count {
                if !chunks[head].counted { uncountedQueued -= chunks[head].bytes.count }
                chunks[head].bytes = []  // released as soon as it is written
                head += 1
                offset = 0
            }
        }
        return counted
    }

    /// Calls `body` with an `iovec` for each chunk in `range` (the first from `offset`). Each chunk's
    /// storage is pinned by a nested `withUnsafeBytes`, so every pointer is valid during the call.
    private func withBuffers<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<iovec>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: range.count) { vectors in
            func pin(_ index: Int) -> R {
                guard index < range.upperBound else { return body(UnsafeBufferPointer(vectors)) }
                return chunks[index].bytes.withUnsafeBytes { bytes in
                    let skip = index == head ? offset : 0
                    vectors.initializeElement(
                        at: index - range.lowerBound,
                        to: iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip),
                            iov_len: bytes.count - skip))
                    return pin(index + 1)
                }
            }
            return pin(range.lowerBound)
        }
    }
}
