#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A durable append-only file of byte records, each checksummed, that survives crashes: a record is on
/// disk once `append` returns, and a record torn by a crash mid-append is cut off at the next open.
///
/// File layout: a 7-byte header (`"SSLOG1"` in ASCII, then version byte 1), then records, each a
/// `UInt32` little-endian payload length, a `UInt32` little-endian CRC-32 (`CRC32`) of the payload, and
/// the payload.
///
/// Not `Sendable`: a log is owned by one actor (or thread) at a time, which serializes every call. Two
/// logs must not be open on the same file at once; nothing here locks the file.
public final class RecordLog {
    /// The largest payload a record may have: 64 MiB.
    public static let maximumRecordSize = 64 * 1024 * 1024

    /// The bytes every record log starts with: `"SSLOG1"` and version byte 1.
    static let header: [UInt8] = Array("SSLOG1".utf8) + [1]

    /// Bytes in front of each record's payload: its length and its checksum.
    static let recordHeaderSize = 8

    /// The path the log was opened with.
    public let path: String

    /// The intact records found at open, in the order they were appended.
    public let recoveredRecords: [[UInt8]]

    /// How many bytes of torn or corrupt tail were cut off at open; 0 when the file ended cleanly.
    public let truncatedBytes: Int

    /// The open file descriptor, or -1 once closed.
    private var descriptor: Int32

    /// The file's length: where the next record goes.
    private var length: Int

    /// Opens the record log at `path`, creating it (mode 0644) if it does not exist; the parent directory
    /// must exist.
    ///
    /// Reads every intact record into `recoveredRecords`. Reading stops at the first record whose header
    /// is incomplete, whose length exceeds the bytes that remain or `maximumRecordSize`, or whose checksum
    /// does not match; the file is truncated there and fsynced, and `truncatedBytes` says how much was
    /// cut. A new file gets its header written and fsynced, and its directory is fsynced so the file
    /// itself survives a crash. A file shorter than the header whose bytes are a prefix of it (a crash
    /// while creating it) is completed the same way.
    ///
    /// - Throws: `.cannotOpen` if `open` fails, `.notARecordLog` if the file has a different header,
    ///   `.readFailed`, `.writeFailed` or `.syncFailed` if the system calls fail. The file is closed when
    ///   it throws.
    public init(path: String) throws(RecordLogError) {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        let recovery: Recovery
        do {
            recovery = try Self.recover(descriptor: descriptor, path: path)
        } catch {
            closeDescriptor(descriptor)
            throw error
        }
        self.path = path
        self.descriptor = descriptor
        recoveredRecords = recovery.records
        truncatedBytes = recovery.truncatedBytes
        length = recovery.length
    }

    deinit {
        close()
    }

    /// The file's current length in bytes, header included: 7 for an empty log, and each record adds 8
    /// plus its payload's length.
    public var byteCount: Int { length }

    /// Appends `records`, in order, durably: all of them are written (in one `write` call when the system
    /// takes them at once), then the file is fsynced once.
    ///
    /// An empty array does nothing. If any record exceeds `maximumRecordSize`, nothing is written. If the
    /// write or the fsync fails, the file is cut back to its previous length, so no partial record stays
    /// behind, and none of `records` counts as appended.
    ///
    /// - Throws: `.closed` after `close()`, `.recordTooLarge`, `.writeFailed`, `.syncFailed`.
    public func append(_ records: [[UInt8]]) throws(RecordLogError) {
        guard descriptor >= 0 else { throw .closed }
        var total = 0
        for record in records {
            guard record.count <= Self.maximumRecordSize else {
                throw .recordTooLarge(record.count, limit: Self.maximumRecordSize)
            }
            total += Self.recordHeaderSize + record.count
        }
        guard total > 0 else { return }

        var buffer: [UInt8] = []
        buffer.reserveCapacity(total)
        for record in records {
            withUnsafeBytes(of: UInt32(record.count).littleEndian) { buffer.append(contentsOf: $0) }
            withUnsafeBytes(of: CRC32.checksum(record).littleEndian) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: record)
        }

        let previousLength = length
        if let code = writeAll(buffer, at: previousLength) {
            cutBack(to: previousLength)
            throw .writeFailed(path: path, errno: code)
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            cutBack(to: previousLength)
            throw .syncFailed(path: path, errno: code)
        }
        length = previousLength + total
    }

    /// Appends one record durably; the same as `append([record])`.
    ///
    /// - Throws: `.closed` after `close()`, `.recordTooLarge`, `.writeFailed`, `.syncFailed`.
    public func append(_ record: [UInt8]) throws(RecordLogError) {
        try append([record])
    }

    /// Closes the file. Later appends throw `.closed`. Idempotent; `deinit` calls it.
    public func close() {
        guard descriptor >= 0 else { return }
        closeDescriptor(descriptor)
        descriptor = -1
    }

    // MARK: - Writing

    /// Writes all of `bytes` at `offset`, retrying on `EINTR` and short writes. Returns `errno` on failure.
    private func writeAll(_ bytes: [UInt8], at offset: Int) -> Int32? {
        Self.writeAll(bytes, at: offset, descriptor: descriptor)
    }

    private static func writeAll(_ bytes: [UInt8], at offset: Int, descriptor: Int32) -> Int32? {
        bytes.withUnsafeBytes { buffer -> Int32? in
            var written = 0
            while written < buffer.count {
                let result = pwrite(
                    descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                // A zero-byte write of a non-empty buffer makes no progress; report it rather than spin.
                if result == 0 { return EIO }
                written += result
            }
            return nil
        }
    }

    /// Best effort after a failed append: truncates to `previousLength` and fsyncs, so no partial record
    /// remains. Failures here are ignored: the append's own error is the one reported, and a partial record
    /// left behind would be cut at the next open anyway.
    private func cutBack(to previousLength: Int) {
        _ = ftruncate(descriptor, off_t(previousLength))
        _ = fsync(descriptor)
    }

    // MARK: - Recovery

    /// What `recover` found.
    private struct Recovery {
        var records: [[UInt8]]
        var length: Int
        var truncatedBytes: Int
    }

    /// Reads the file behind `descriptor`, writes the header of a new file, and cuts a bad tail.
    private static func recover(descriptor: Int32, path: String) throws(RecordLogError) -> Recovery {
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else { throw .readFailed(path: path, errno: errno) }
        let contents = try readAll(descriptor: descriptor, count: Int(end), path: path)

        if contents.count < header.count {
            // Empty, or torn while being created: complete the header.
            guard contents == Array(header[..<contents.count]) else { throw .notARecordLog(path: path) }
            if let code = writeAll(header, at: 0, descriptor: descriptor) {
                throw .writeFailed(path: path, errno: code)
            }
            guard fsync(descriptor) == 0 else { throw .syncFailed(path: path, errno: errno) }
            try syncParentDirectory(of: path)
            return Recovery(records: [], length: header.count, truncatedBytes: 0)
        }
        guard Array(contents[..<header.count]) == header else { throw .notARecordLog(path: path) }

        let (records, validLength) = parseRecords(contents)
        if validLength < contents.count {
            guard ftruncate(descriptor, off_t(validLength)) == 0 else { throw .writeFailed(path: path, errno: errno) }
            guard fsync(descriptor) == 0 else { throw .syncFailed(path: path, errno: errno) }
        }
        return Recovery(records: records, length: validLength, truncatedBytes: contents.count - validLength)
    }

    /// The intact records after the header, and the length of the file up to the end of the last one.
    private static func parseRecords(_ contents: [UInt8]) -> (records: [[UInt8]], validLength: Int) {
        contents.withUnsafeBufferPointer { buffer in
            var records: [[UInt8]] = []
            var offset = header.count
            while buffer.count - offset >= recordHeaderSize {
                let payloadLength = Int(littleEndianUInt32(buffer, at: offset))
                let checksum = littleEndianUInt32(buffer, at: offset + 4)
                let payloadStart = offset + recordHeaderSize
                guard payloadLength <= maximumRecordSize, payloadLength <= buffer.count - payloadStart else { break }
                let payload = UnsafeBufferPointer(rebasing: buffer[payloadStart..<(payloadStart + payloadLength)])
                guard CRC32.checksum(payload) == checksum else { break }
                records.append(Array(payload))
                offset = payloadStart + payloadLength
            }
            return (records, offset)
        }
    }

    /// The little-endian `UInt32` at `offset` (the caller has checked that 4 bytes are there).
    private static func littleEndianUInt32(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32 {
        UInt32(buffer[offset]) | UInt32(buffer[offset + 1]) << 8 | UInt32(buffer[offset + 2]) << 16
            | UInt32(buffer[offset + 3]) << 24
    }

    /// Reads up to `count` bytes from the start of the file, retrying on `EINTR` and short reads; stops
    /// early at end of file (so the result may be shorter if the file shrank).
    private static func readAll(descriptor: Int32, count: Int, path: String) throws(RecordLogError) -> [UInt8] {
        var contents = [UInt8](repeating: 0, count: count)
        var filled = 0
        let failure: Int32? = contents.withUnsafeMutableBytes { buffer in
            while filled < count {
                let result = pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(filled))
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if result == 0 { break }
                filled += result
            }
            return nil
        }
        if let failure { throw .readFailed(path: path, errno: failure) }
        if filled < count { contents.removeSubrange(filled...) }
        return contents
    }

    /// Fsyncs the directory holding `path`, so a newly created file's directory entry is durable.
    private static func syncParentDirectory(of path: String) throws(RecordLogError) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .syncFailed(path: path, errno: errno) }
        defer { closeDescriptor(descriptor) }
        guard fsync(descriptor) == 0 else { throw .syncFailed(path: path, errno: errno) }
    }
}

/// Deliberately not `Sendable`: see the type's documentation.
@available(*, unavailable)
extension RecordLog: Sendable {}

/// Closes `descriptor`, ignoring errors (on Linux the descriptor is released even when `close` reports
/// `EINTR`, so retrying could close someone else's descriptor).
private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
        _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
    #endif
}
