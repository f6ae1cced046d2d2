#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `RecordLog` does when it opens a file: checks (or writes) the file header, visits every record of
/// every complete batch, and decides what a bad record means.
///
/// Records are visited batch by batch: a batch's records are visited once its commit record (its last)
/// has been read intact, so the records of a batch that did not fully reach the disk are never visited.
///
/// At the first bad record (a bad marker, flags or header check, a length beyond `maximumRecordSize` or
/// the end of the file, a checksum mismatch, a batch field that is not the open batch's start) it looks
/// for an intact record anywhere after it. One of another batch: that batch was written after this one
/// was fsynced, so the damage is in a durable region — `.corrupted`, and nothing is changed. None, or only
/// records of the bad record's own batch: the final batch did not fully reach the disk before a crash (its
/// pages can land in any order) — the file is cut at the batch's start and fsynced, and the cut is
/// reported. A final batch whose records are intact but whose commit record is missing is cut the same
/// way.
///
/// The file is read through a window of `windowSize` bytes (a record larger than the window is read on
/// its own), so opening a file of any size takes bounded memory. The search for an intact record checks
/// headers (marker and header check) before any payload's checksum, so it costs about one CRC of a
/// header per 256 bytes of tail.
struct RecordLogScan {
    let path: String
    let fileSystem: any FileSystem
    let descriptor: Int32
    var windowSize = 1 << 20

    /// What the file header says.
    enum Header {
        /// A version 3 file (or one just created) with this salt.
        case current(salt: UInt64)
        /// A version 2 file: `RecordLog` converts it.
        case version2
    }

    /// Reads the file header, or writes one (with a new random salt) when the file is new or was torn
    /// while it was being created.
    func header() throws(RecordLogError) -> Header {
        let size: UInt64
        switch fileSystem.size(descriptor) {
        case .success(let value): size = UInt64(max(0, value))
        case .failure(let error): throw .readFailed(path: path, errno: error.code)
        }
        var reader = WindowReader(scan: self, size: size, codec: .version2)
        let present = Array(try reader.bytes(at: 0, count: Int(min(size, UInt64(RecordFormat.fileHeaderSize)))))
        if present.starts(with: RecordFormat.legacyHeader) { throw .unsupportedVersion(path: path, version: 1) }
        if present.starts(with: RecordFormat.version2Header) { return .version2 }
        let expected = RecordFormat.fileHeader(salt: 0)
        if present.count < RecordFormat.fileHeaderSize {
            // A new file, or one whose creation a crash tore (no record can follow a partial header).
            let known = min(present.count, RecordFormat.magic.count + 3)
            guard
                Array(present[..<known]) == Array(expected[..<known])
                    || RecordFormat.version2Header.starts(with: present)
            else {
                if present.count >= 7, Array(present[..<5]) == RecordFormat.magic {
                    throw .unsupportedVersion(path: path, version: UInt16(present[5]) | UInt16(present[6]) << 8)
                }
                throw .notARecordLog(path: path)
            }
            let salt = UInt64.random(in: 1...UInt64.max)
            try createHeader(RecordFormat.fileHeader(salt: salt))
            return .current(salt: salt)
        }
        guard Array(present[0..<5]) == RecordFormat.magic else { throw .notARecordLog(path: path) }
        let version = UInt16(present[5]) | UInt16(present[6]) << 8
        guard version == RecordFormat.version else { throw .unsupportedVersion(path: path, version: version) }
        let salt = present.withUnsafeBytes { RecordFormat.load64($0, at: 8) }
        return .current(salt: salt)
    }

    /// Visits the records of every complete batch after the file header (whose size `codec` knows), and
    /// cuts a torn final batch.
    func run(
        codec: RecordCodec,
        visit: (RecordLocation, UnsafeRawBufferPointer, RecordChecksum) -> Void
    ) throws(RecordLogError) -> (length: UInt64, recovery: RecordLog.Recovery) {
        let size: UInt64
        switch fileSystem.size(descriptor) {
        case .success(let value): size = UInt64(max(0, value))
        case .failure(let error): throw .readFailed(path: path, errno: error.code)
        }
        var reader = WindowReader(scan: self, size: size, codec: codec)
        var offset = UInt64(codec.fileHeaderSize)
        var count = 0
        /// Where the batch being read began, and its records read so far (visited at its commit).
        var batchStart = offset
        var pending: [(location: RecordLocation, checksum: UInt32)] = []
        while offset < size {
            let expectedBatch = batchStart
            let immediate = pending.isEmpty
            guard
                let (location, header) = try reader.intactRecord(
                    at: offset,
                    visit: { header, location, payload in
                        // A batch of one is visited as it is read; a longer one at its commit.
                        if immediate, header.commit, header.batch == expectedBatch {
                            visit(
                                location, payload,
                                RecordChecksum(codec: codec, length: header.length, checksum: header.checksum))
                        }
                    })
            else { break }
            guard header.batch == batchStart else { break }
            if header.commit {
                if !pending.isEmpty { pending.append((location, header.checksum)) }
                for (earlier, checksum) in pending {
                    let payload = try reader.bytes(
                        at: earlier.offset + UInt64(codec.headerSize), count: Int(earlier.length))
                    let known = RecordChecksum(codec: codec, length: earlier.length, checksum: checksum)
                    payload.withUnsafeBytes { visit(earlier, $0, known) }
                }
                count += max(pending.count, 1)
                pending.removeAll()
                batchStart = offset + UInt64(codec.headerSize) + UInt64(location.length)
            } else {
                pending.append((location, header.checksum))
            }
            offset += UInt64(codec.headerSize) + UInt64(location.length)
        }
        guard offset < size || !pending.isEmpty else {
            return (size, RecordLog.Recovery(recordCount: count, truncatedBytes: 0, truncatedAt: nil))
        }
        // A bad record at `offset` (or the file's end in the middle of a batch): corruption if an intact
        // record of a later batch follows, a torn final batch otherwise.
        if offset < size, try reader.intactRecordOfAnotherBatch(from: offset, batch: batchStart) {
            throw .corrupted(path: path, offset: offset)
        }
        if let error = fileSystem.truncate(descriptor, to: Int64(batchStart)) {
            throw .writeFailed(path: path, errno: error.code)
        }
        if let error = fileSystem.sync(descriptor) { throw .syncFailed(path: path, errno: error.code) }
        let cut = Int(clamping: size - batchStart)
        return (batchStart, RecordLog.Recovery(recordCount: count, truncatedBytes: cut, truncatedAt: batchStart))
    }

    /// Writes the file header of a new (or torn-at-creation) file, fsyncs it and its directory.
    private func createHeader(_ header: [UInt8]) throws(RecordLogError) {
        if let error = fileSystem.truncate(descriptor, to: 0) { throw .writeFailed(path: path, errno: error.code) }
        if let error = header.withUnsafeBytes({ fileSystem.writeAll(descriptor, $0, at: 0) }) {
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
    let codec: RecordCodec
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0

    init(scan: RecordLogScan, size: UInt64, codec: RecordCodec) {
        self.scan = scan
        self.size = size
        self.codec = codec
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

    /// The record at `offset` and its header if it is intact (calling `visit` with them and its payload
    /// first), `nil` if it is not.
    mutating func intactRecord(
        at offset: UInt64,
        visit: (RecordHeader, RecordLocation, UnsafeRawBufferPointer) -> Void
    ) throws(RecordLogError) -> (RecordLocation, RecordHeader)? {
        let headerSize = UInt64(codec.headerSize)
        guard size - offset >= headerSize else { return nil }
        let headerBytes = try bytes(at: offset, count: codec.headerSize)
        guard let header = headerBytes.withUnsafeBytes({ codec.parseHeader($0, at: offset) }) else { return nil }
        guard let payloadLength = Int(exactly: header.length), payloadLength <= RecordLog.maximumRecordSize,
            UInt64(payloadLength) <= size - offset - headerSize
        else { return nil }
        let location = RecordLocation(offset: offset, length: header.length)
        let payload = try bytes(at: offset + headerSize, count: payloadLength)
        let intact = payload.withUnsafeBytes { buffer -> Bool in
            guard codec.checksum(length: header.length, payload: buffer) == header.checksum else { return false }
            visit(header, location, buffer)
            return true
        }
        return intact ? (location, header) : nil
    }

    /// Whether an intact record of a batch other than the one starting at `batch` starts at `offset` or
    /// anywhere after it.
    mutating func intactRecordOfAnotherBatch(from offset: UInt64, batch: UInt64) throws(RecordLogError) -> Bool {
        let headerSize = UInt64(codec.headerSize)
        var position = offset
        while position + headerSize <= size {
            // Skip to the next marker byte within the window.
            let chunk = try bytes(at: position, count: Int(min(UInt64(scan.windowSize), size - position)))
            guard let found = chunk.firstIndex(of: RecordFormat.marker) else {
                position += UInt64(chunk.count)
                continue
            }
            let candidate = position + UInt64(found - chunk.startIndex)
            if let (_, header) = try intactRecord(at: candidate, visit: { _, _, _ in }), header.batch != batch {
                return true
            }
            position = candidate + 1
        }
        return false
    }
}
