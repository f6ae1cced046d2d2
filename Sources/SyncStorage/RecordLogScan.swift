#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `RecordLog` does when it opens a file: checks (or writes) the file header, visits every intact
/// record, and decides what a bad record means.
///
/// At the first bad record (a bad marker or header check, a length beyond `maximumRecordSize` or the end
/// of the file, a checksum mismatch) it looks for an intact record anywhere after it. Found: the damage
/// is in the middle of the file — `.corrupted`, and nothing is changed. Not found: it is an incomplete
/// final record (or a zero-filled tail) — the file is cut there and fsynced, and the cut is reported.
///
/// The file is read through a window of `windowSize` bytes (a record larger than the window is read on
/// its own), so opening a file of any size takes bounded memory. The search for an intact record checks
/// 13-byte headers (marker and header check) before any payload's checksum, so it costs about one CRC of
/// 13 bytes per 256 bytes of tail.
struct RecordLogScan {
    let path: String
    let fileSystem: any FileSystem
    let descriptor: Int32
    var windowSize = 1 << 20

    func run(
        visit: (RecordLocation, UnsafeRawBufferPointer) -> Void
    ) throws(RecordLogError) -> (
        length: UInt64, recovery: RecordLog.Recovery
    ) {
        let size: UInt64
        switch fileSystem.size(descriptor) {
        case .success(let value): size = UInt64(max(0, value))
        case .failure(let error): throw .readFailed(path: path, errno: error.code)
        }
        let headerSize = UInt64(RecordFormat.fileHeaderSize)
        if size < headerSize {
            try createHeader(existing: size)
            return (headerSize, RecordLog.Recovery(recordCount: 0, truncatedBytes: 0, truncatedAt: nil))
        }
        var reader = WindowReader(scan: self, size: size)
        let header = try reader.bytes(at: 0, count: RecordFormat.fileHeaderSize)
        if Array(header[0..<7]) == RecordFormat.legacyHeader { throw .unsupportedVersion(path: path, version: 1) }
        guard Array(header[0..<5]) == RecordFormat.magic else { throw .notARecordLog(path: path) }
        let version = UInt16(header[5]) | UInt16(header[6]) << 8
        guard version == RecordFormat.version else { throw .unsupportedVersion(path: path, version: version) }

        var offset = headerSize
        var count = 0
        while offset < size {
            guard let location = try reader.intactRecord(at: offset, visit: visit) else { break }
            count += 1
            offset = location.end
        }
        guard offset < size else {
            return (size, RecordLog.Recovery(recordCount: count, truncatedBytes: 0, truncatedAt: nil))
        }
        // A bad record at `offset`: corruption if anything intact follows, a torn tail otherwise.
        if try reader.intactRecordExists(after: offset) { throw .corrupted(path: path, offset: offset) }
        if let error = fileSystem.truncate(descriptor, to: Int64(offset)) {
            throw .writeFailed(path: path, errno: error.code)
        }
        if let error = fileSystem.sync(descriptor) { throw .syncFailed(path: path, errno: error.code) }
        let cut = Int(clamping: size - offset)
        return (offset, RecordLog.Recovery(recordCount: count, truncatedBytes: cut, truncatedAt: offset))
    }

    /// Writes the file header of a new (or torn-at-creation) file, fsyncs it and its directory.
    private func createHeader(existing size: UInt64) throws(RecordLogError) {
        if size == UInt64(RecordFormat.legacyHeader.count) {
            var reader = WindowReader(scan: self, size: size)
            if Array(try reader.bytes(at: 0, count: Int(size))) == RecordFormat.legacyHeader {
                throw .unsupportedVersion(path: path, version: 1)
            }
        }
        if size > 0 {
            var reader = WindowReader(scan: self, size: size)
            let present = try reader.bytes(at: 0, count: Int(size))
            guard Array(present) == Array(RecordFormat.fileHeader[..<Int(size)]) else {
                throw .notARecordLog(path: path)
            }
        }
        if let error = RecordFormat.fileHeader.withUnsafeBytes({ fileSystem.writeAll(descriptor, $0, at: 0) }) {
            throw .writeFailed(path: path, errno: error.code)
        }
        if let error = fileSystem.sync(descriptor) { throw .syncFailed(path: path, errno: error.code) }
        try syncParentDirectory()
    }

    /// Fsyncs the directory holding the file, so that a new file's directory entry is durable.
    private func syncParentDirectory() throws(RecordLogError) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        switch fileSystem.open(directory, flags: O_RDONLY | O_CLOEXEC, mode: 0) {
        case .failure(let error):
            throw .syncFailed(path: path, errno: error.code)
        case .success(let handle):
            defer { fileSystem.close(handle) }
            if let error = fileSystem.sync(handle) { throw .syncFailed(path: path, errno: error.code) }
        }
    }
}

/// Reads a file through a window of bytes, for the scan.
private struct WindowReader {
    let scan: RecordLogScan
    let size: UInt64
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0

    init(scan: RecordLogScan, size: UInt64) {
        self.scan = scan
        self.size = size
    }

    /// `count` bytes at `offset` (which the caller checked lie within the file).
    mutating func bytes(at offset: UInt64, count: Int) throws(RecordLogError) -> ArraySlice<UInt8> {
        let windowEnd = windowStart + UInt64(window.count)
        if offset >= windowStart, offset + UInt64(count) <= windowEnd {
            let start = Int(offset - windowStart)
            return window[start..<(start + count)]
        }
        if count > scan.windowSize { return try read(at: offset, count: count)[...] }
        window = try read(at: offset, count: Int(min(UInt64(scan.windowSize), size - offset)))
        windowStart = offset
        guard window.count >= count else { throw .readFailed(path: scan.path, errno: EIO) }
        return window[0..<count]
    }

    private func read(at offset: UInt64, count: Int) throws(RecordLogError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                scan.fileSystem.read(
                    scan.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]),
                    at: Int64(offset) + Int64(filled))
            }
            switch result {
            case .failure(let error): throw .readFailed(path: scan.path, errno: error.code)
            case .success(0): throw .readFailed(path: scan.path, errno: EIO)  // the file shrank under us
            case .success(let read): filled += read
            }
        }
        return bytes
    }

    /// The record at `offset` if it is intact (calling `visit` with it), `nil` if it is not.
    mutating func intactRecord(
        at offset: UInt64,
        visit: (RecordLocation, UnsafeRawBufferPointer) -> Void
    ) throws(RecordLogError) -> RecordLocation? {
        let headerSize = UInt64(RecordFormat.recordHeaderSize)
        guard size - offset >= headerSize else { return nil }
        let header = try bytes(at: offset, count: RecordFormat.recordHeaderSize)
        guard let (length, checksum) = header.withUnsafeBytes({ RecordFormat.parseHeader($0) }) else { return nil }
        guard let payloadLength = Int(exactly: length), payloadLength <= RecordLog.maximumRecordSize,
            UInt64(payloadLength) <= size - offset - headerSize
        else { return nil }
        let payload = try bytes(at: offset + headerSize, count: payloadLength)
        let intact = payload.withUnsafeBytes { buffer -> Bool in
            guard RecordFormat.checksum(length: length, payload: buffer) == checksum else { return false }
            visit(RecordLocation(offset: offset, length: length), buffer)
            return true
        }
        return intact ? RecordLocation(offset: offset, length: length) : nil
    }

    /// Whether an intact record starts anywhere after `offset`.
    mutating func intactRecordExists(after offset: UInt64) throws(RecordLogError) -> Bool {
        let headerSize = UInt64(RecordFormat.recordHeaderSize)
        var position = offset + 1
        while position + headerSize <= size {
            // Skip to the next marker byte within the window.
            let chunk = try bytes(at: position, count: Int(min(UInt64(scan.windowSize), size - position)))
            guard let found = chunk.firstIndex(of: RecordFormat.marker) else {
                position += UInt64(chunk.count)
                continue
            }
            let candidate = position + UInt64(found - chunk.startIndex)
            if try intactRecord(at: candidate, visit: { _, _ in }) != nil { return true }
            position = candidate + 1
        }
        return false
    }
}
