import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a record log's records by location, from any thread, with a read-only descriptor of its own
/// (taking no lock: it reads only records an append already made durable). Each read checks the record's
/// header, so a location that is wrong is a typed error — never wrong bytes; a record that was on the disk
/// when its log opened is checked against its checksum too, so one damaged since is a typed error. (A
/// record the log appended since was checksummed as this process wrote it; see `RecordLog.read`.)
public final class RecordReader: Sendable {
    public let path: String
    private let fileSystem: any FileSystem
    /// The descriptor (-1 once closed), how many reads are using it, and whether `close()` was called
    /// while some were: the last of them closes it. A descriptor is never closed under a read in progress
    /// (it would read `EBADF`, or another file that reused the number; simulation seed 3922).
    private let state: Locked<(descriptor: Int32, readers: Int, closing: Bool)>
    private let codec: RecordCodec
    /// Where the records its log appended begin (the file's length when the log opened).
    private let appendedFrom: UInt64

    /// Opens the log's file and reads the salt from its header (the log wrote the header before it opened).
    init(path: String, fileSystem: any FileSystem, appendedFrom: UInt64) throws(RecordLogError) {
        let opened: Int32
        switch fileSystem.open(path, flags: O_RDONLY | O_CLOEXEC, mode: 0) {
        case .success(let value): opened = value
        case .failure(let error): throw .cannotOpen(path: path, errno: error.code)
        }
        let header: [UInt8]
        do {
            header = try PartReader(
                location: RecordLocation(offset: 0, length: 0), descriptor: opened, fileSystem: fileSystem, path: path
            ).bytes(count: RecordFormat.fileHeaderSize, at: 0)
        } catch {
            fileSystem.close(opened)
            throw error
        }
        guard header.starts(with: RecordFormat.fileHeader(salt: 0).prefix(8)) else {
            fileSystem.close(opened)
            throw .notARecordLog(path: path)
        }
        codec = RecordCodec(salt: header.withUnsafeBytes { RecordFormat.load64($0, at: 8) })
        state = Locked((opened, 0, false))
        self.appendedFrom = appendedFrom
        self.path = path
        self.fileSystem = fileSystem
    }

    deinit { close() }

    /// The payload of the record at `location`.
    ///
    /// - Throws: `.closed` after `close()`, `.badLocation`, `.readFailed`.
    public func read(_ location: RecordLocation) throws(RecordLogError) -> [UInt8] {
        try read(location, prefixLength: 0).body
    }

    /// The payload of the record at `location` in two parts, each read into an array of its own: its first
    /// `prefixLength` bytes (fewer when the payload is shorter) and the rest, so a large body is never
    /// copied out of a buffer that holds the record's header too.
    ///
    /// - Throws: `.closed` after `close()`, `.badLocation`, `.readFailed`.
    public func read(_ location: RecordLocation, prefixLength: Int) throws(RecordLogError) -> RecordPayload {
        guard location.offset >= UInt64(RecordFormat.fileHeaderSize) else {
            throw .badLocation(path: path, offset: location.offset)
        }
        let descriptor = state.withLock { state -> Int32 in
            guard state.descriptor >= 0, !state.closing else { return -1 }
            state.readers += 1
            return state.descriptor
        }
        guard descriptor >= 0 else { throw .closed }
        defer { endRead() }
        return try Self.read(
            location, prefixLength: prefixLength, from: descriptor, fileSystem: fileSystem, path: path, codec: codec,
            appendedFrom: appendedFrom)
    }

    /// Closes the descriptor — at once, or, when reads are using it, as the last of them ends; later reads
    /// throw `.closed`. Idempotent; never waits.
    public func close() {
        let closing = state.withLock { state -> Int32 in
            guard state.descriptor >= 0, !state.closing else { return -1 }
            guard state.readers == 0 else {
                state.closing = true
                return -1
            }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if closing >= 0 { fileSystem.close(closing) }
    }

    /// A read ended: the last one after `close()` closes the descriptor.
    private func endRead() {
        let closing = state.withLock { state -> Int32 in
            state.readers -= 1
            guard state.closing, state.readers == 0 else { return -1 }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if closing >= 0 { fileSystem.close(closing) }
    }

    /// Records up to this size are read with one `pread` and split; larger ones read their body into its
    /// own array with a second.
    static let singleReadLimit = 64 * 1024

    /// Reads and checks the record at `location` through `descriptor`, split after `prefixLength` bytes of
    /// its payload: its header always, its payload's checksum when it lies before `appendedFrom` (it was on
    /// the disk when the log opened).
    static func read(
        _ location: RecordLocation,
        prefixLength: Int,
        from descriptor: Int32,
        fileSystem: any FileSystem,
        path: String,
        codec: RecordCodec,
        appendedFrom: UInt64
    ) throws(RecordLogError) -> RecordPayload {
        guard let length = Int(exactly: location.length), length <= RecordLog.maximumRecordSize,
            let offset = Int64(exactly: location.offset)
        else { throw .badLocation(path: path, offset: location.offset) }
        let prefixCount = min(max(prefixLength, 0), length)
        let headerSize = RecordFormat.recordHeaderSize
        let read = PartReader(location: location, descriptor: descriptor, fileSystem: fileSystem, path: path)

        let head: [UInt8]
        let prefix: [UInt8]
        let body: [UInt8]
        if headerSize + length <= singleReadLimit {
            let bytes = try read.bytes(count: headerSize + length, at: offset)
            head = Array(bytes[0..<headerSize])
            prefix = Array(bytes[headerSize..<(headerSize + prefixCount)])
            body = Array(bytes[(headerSize + prefixCount)...])
        } else {
            let front = try read.bytes(count: headerSize + prefixCount, at: offset)
            head = Array(front[0..<headerSize])
            prefix = Array(front[headerSize...])
            body = try read.bytes(count: length - prefixCount, at: offset + Int64(headerSize + prefixCount))
        }
        let intact = head.withUnsafeBytes { header -> Bool in
            guard let parsed = codec.parseHeader(header, at: location.offset), parsed.length == location.length
            else { return false }
            guard location.offset < appendedFrom else { return true }
            return prefix.withUnsafeBytes { prefix in
                body.withUnsafeBytes { body in
                    codec.checksum(length: parsed.length, parts: prefix, body) == parsed.checksum
                }
            }
        }
        guard intact else { throw .badLocation(path: path, offset: location.offset) }
        return RecordPayload(prefix: prefix, body: body)
    }
}

/// Reads exact byte counts of one record, continuing after short reads.
private struct PartReader {
    let location: RecordLocation
    let descriptor: Int32
    let fileSystem: any FileSystem
    let path: String

    /// `count` bytes at `offset`, in an array of exactly that size.
    func bytes(count: Int, at offset: Int64) throws(RecordLogError) -> [UInt8] {
        var failure: RecordLogError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var filled = 0
            while filled < count {
                let target = UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[filled...])
                switch fileSystem.read(descriptor, into: target, at: offset + Int64(filled)) {
                case .failure(let error):
                    failure = .readFailed(path: path, errno: error.code)
                case .success(0):
                    failure = .badLocation(path: path, offset: location.offset)
                case .success(let read):
                    filled += read
                }
                if failure != nil { break }
            }
            initialized = failure == nil ? count : 0
        }
        if let failure { throw failure }
        return bytes
    }
}
