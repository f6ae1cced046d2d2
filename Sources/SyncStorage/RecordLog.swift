#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A durable append-only file of byte records, each checksummed, that never lies about what it holds.
///
/// - **Durable:** a record is on disk once `append` returns (one fsync per call; `F_FULLFSYNC` on Darwin).
/// - **Batches are atomic; torn batches are cut, corruption is refused:** an `append` is a batch whose
///   last record commits it. At open, a final batch that did not fully reach the disk — its pages landed
///   in any order, or not at all, or a zero-filled tail — is cut off whole and reported (`recovery`); a
///   bad record that an intact record of a later batch follows is corruption: opening fails with
///   `.corrupted(path:offset:)` and nothing is changed. (Version 2 files are converted at open.)
/// - **One writer:** opening takes an exclusive `flock`; a second open of the file fails with `.locked`.
/// - **Poisoned after a failed fsync:** every later append throws `.poisoned` (retrying an fsync can
///   falsely succeed after the kernel dropped the dirty pages).
/// - **Memory in proportion to the index, not the data:** opening visits each intact record once (reading
///   the file in bounded windows) and keeps nothing; `append` returns each record's location, and `read`
///   (or a `RecordReader`, from any thread) reads a record back by location, checking its header, and its
///   checksum when the record was on the disk before this log opened (see `read(_:prefixLength:)`).
///
/// The byte layout is `RecordFormat`'s. Not `Sendable`: a log is owned by one actor, thread or queue at a
/// time, which serializes every call.
public final class RecordLog {
    /// The largest payload a record may have: 64 MiB.
    public static let maximumRecordSize = 64 * 1024 * 1024

    /// What opening found and did.
    public struct Recovery: Sendable, Hashable {
        /// Intact records found.
        public var recordCount: Int
        /// Bytes of an incomplete final batch (or zero-filled tail) cut off; 0 when the file ended cleanly.
        public var truncatedBytes: Int
        /// Where the cut was made (the file's length after opening), when there was one.
        public var truncatedAt: UInt64?
    }

    /// The path the log was opened with.
    public let path: String
    /// What opening found.
    public let recovery: Recovery

    private let fileSystem: any FileSystem
    private var descriptor: Int32
    /// The file's length: where the next record goes.
    private var length: UInt64
    /// Set by a failed fsync or truncate: appends fail from then on.
    private var poison: Int32?
    /// The file's salt, in the checksums.
    private let codec: RecordCodec
    /// The file's length when it was opened: records from here on were written (and checksummed) by this
    /// process, so reading one back checks its header but not its payload's checksum a second time.
    private let appendedFrom: UInt64

    /// Opens the record log at `path`, creating it (mode 0644) if it does not exist (the parent directory
    /// must exist), and calls `visit` with each intact record's location and payload, in order (the payload
    /// is valid only during the call).
    ///
    /// - Throws: `.cannotOpen`, `.locked`, `.notARecordLog`, `.unsupportedVersion`, `.corrupted`,
    ///   `.readFailed`, `.writeFailed`, `.syncFailed`. The file is closed when it throws.
    public convenience init(
        path: String,
        visit: (RecordLocation, UnsafeRawBufferPointer) -> Void = { _, _ in }
    ) throws(RecordLogError) {
        try self.init(path: path, fileSystem: SystemFileSystem(), visit: visit)
    }

    /// Opens with the given system calls (tests inject failures through them).
    ///
    /// A version 2 file is converted first: its intact records are copied, in order, to a version 3 file
    /// beside it (`.migrating-<name>`), which is fsynced and renamed over it; `recovery` then reports what
    /// the version 2 scan cut.
    package convenience init(
        path: String,
        fileSystem: any FileSystem,
        visit: (RecordLocation, UnsafeRawBufferPointer) -> Void = { _, _ in }
    ) throws(RecordLogError) {
        try self.init(
            path: path, fileSystem: fileSystem, visitChecked: { location, payload, _ in visit(location, payload) })
    }

    /// Opens as `init(path:fileSystem:visit:)` does, and gives `visitChecked` each record's checked checksum
    /// too, from which the CRC-32 of a part of its payload is found without reading that part again.
    package init(
        path: String,
        fileSystem: any FileSystem,
        visitChecked visit: (RecordLocation, UnsafeRawBufferPointer, RecordChecksum) -> Void
    ) throws(RecordLogError) {
        var descriptor = try Self.openLocked(path, fileSystem: fileSystem)
        var converted: Recovery?
        let opened: (length: UInt64, recovery: Recovery)
        let codec: RecordCodec
        do throws(RecordLogError) {
            var scan = RecordLogScan(path: path, fileSystem: fileSystem, descriptor: descriptor)
            var header = try scan.header()
            if case .version2 = header {
                converted = try Self.convertVersion2(path, fileSystem: fileSystem, descriptor: descriptor)
                fileSystem.close(descriptor)
                descriptor = try Self.openLocked(path, fileSystem: fileSystem)
                scan = RecordLogScan(path: path, fileSystem: fileSystem, descriptor: descriptor)
                header = try scan.header()
            }
            guard case .current(let salt) = header else { throw .unsupportedVersion(path: path, version: 2) }
            codec = RecordCodec(salt: salt)
            opened = try scan.run(codec: codec, visit: visit)
        } catch {
            fileSystem.close(descriptor)
            throw error
        }
        self.path = path
        self.fileSystem = fileSystem
        self.descriptor = descriptor
        self.codec = codec
        length = opened.length
        appendedFrom = opened.length
        if let converted, converted.truncatedBytes > 0 {
            recovery = Recovery(
                recordCount: opened.recovery.recordCount, truncatedBytes: converted.truncatedBytes,
                truncatedAt: converted.truncatedAt)
        } else {
            recovery = opened.recovery
        }
    }

    /// How many times an open tries a lock that is being released (`FileLockWait`); a lock held for longer
    /// is `.locked`.
    static let lockAttempts = FileLockWait.attempts

    /// Opens `path` (creating it) and takes its exclusive lock, waiting briefly for one being released
    /// (`FileLockWait`).
    private static func openLocked(_ path: String, fileSystem: any FileSystem) throws(RecordLogError) -> Int32 {
        let descriptor: Int32
        switch fileSystem.open(path, flags: O_CREAT | O_RDWR | O_CLOEXEC, mode: 0o644) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw .cannotOpen(path: path, errno: error.code)
        }
        if let error = FileLockWait.lockExclusively(descriptor, fileSystem: fileSystem) {
            fileSystem.close(descriptor)
            throw error.code == EWOULDBLOCK ? .locked(path: path) : .cannotOpen(path: path, errno: error.code)
        }
        return descriptor
    }

    /// Copies the intact records of the version 2 file open (and locked) at `descriptor` to a new version
    /// 3 log, in batches of about 1 MiB, and renames that over `path`. Returns what the version 2 scan
    /// found (and cut). A crash before the rename leaves the version 2 file as it was (the next open starts
    /// over); after it, the version 3 file.
    private static func convertVersion2(
        _ path: String, fileSystem: any FileSystem, descriptor: Int32
    ) throws(RecordLogError) -> Recovery {
        let slash = path.lastIndex(of: "/")
        let temporary =
            slash.map { String(path[...$0]) + ".migrating-" + String(path[path.index(after: $0)...]) }
            ?? ".migrating-" + path
        _ = unlink(temporary)
        let target = try RecordLog(path: temporary, fileSystem: fileSystem)
        var batch: [[UInt8]] = []
        var batchBytes = 0
        var failure: RecordLogError?
        func flush() {
            guard failure == nil, !batch.isEmpty else { return }
            do { try target.append(batch) } catch { failure = error }
            batch.removeAll()
            batchBytes = 0
        }
        let scanned: (length: UInt64, recovery: Recovery)
        do throws(RecordLogError) {
            scanned = try RecordLogScan(path: path, fileSystem: fileSystem, descriptor: descriptor).run(
                codec: .version2,
                visit: { _, payload, _ in
                    guard failure == nil else { return }
                    batch.append(Array(payload))
                    batchBytes += payload.count
                    if batchBytes >= 1 << 20 { flush() }
                })
            flush()
            if let failure { throw failure }
        } catch {
            target.close()
            _ = unlink(temporary)
            throw error
        }
        target.close()
        if let errno = DurableRename.rename(temporary, over: path, fileSystem: fileSystem) {
            _ = unlink(temporary)
            throw .writeFailed(path: path, errno: errno)
        }
        return scanned.recovery
    }

    deinit { close() }

    /// The file's current length in bytes: 16 for an empty log; each record adds 22 plus its payload.
    public var byteCount: UInt64 { length }

    /// Whether appends fail for good: closed, or poisoned by a failed fsync or truncate. Reopening the file
    /// (a new `RecordLog`) recovers what is durable.
    package var refusesAppends: Bool { descriptor < 0 || poison != nil }

    /// Cuts the file back to `length` (the end of a record this log holds) and fsyncs the cut: the records
    /// after it are gone.
    ///
    /// - Throws: `.closed`, `.badLocation` when `length` lies beyond the end, `.writeFailed`, `.syncFailed`
    ///   (the log is poisoned then).
    package func cut(to newLength: UInt64) throws(RecordLogError) {
        guard descriptor >= 0 else { throw .closed }
        guard newLength >= UInt64(RecordFormat.fileHeaderSize), newLength <= length else {
            throw .badLocation(path: path, offset: newLength)
        }
        if let error = fileSystem.truncate(descriptor, to: Int64(newLength)) {
            poison = error.code
            throw .writeFailed(path: path, errno: error.code)
        }
        if let error = fileSystem.sync(descriptor) {
            poison = error.code
            throw .syncFailed(path: path, errno: error.code)
        }
        length = newLength
    }

    /// Appends `records`, in order, durably: all of them are written, then the file is fsynced once.
    /// Returns their locations. The same as `append(_:)` with each record as a `RecordPayload` body.
    @discardableResult
    public func append(_ records: [[UInt8]]) throws(RecordLogError) -> [RecordLocation] {
        try append(records.map { RecordPayload(body: $0) })
    }

    /// Bodies at least this large are written from their own storage rather than copied into the
    /// staging buffer with the small parts around them.
    static let directWriteThreshold = 64 * 1024
    /// The most bytes of small parts (record headers, prefixes, small bodies) gathered before a write.
    static let stagingCapacity = 256 * 1024

    /// Appends `records`, in order, durably: all of them are written, then the file is fsynced once.
    /// Returns their locations.
    ///
    /// Nothing is copied into one buffer for the whole batch: record headers, prefixes and small bodies
    /// are gathered in a staging buffer of at most `stagingCapacity` bytes, and a body of
    /// `directWriteThreshold` bytes or more is written from its own storage (so appending costs a small,
    /// bounded buffer, whatever the batch's size). A batch of small records is one `pwrite`.
    ///
    /// An empty array does nothing. If any record exceeds `maximumRecordSize`, nothing is written. If a
    /// write fails, the file is cut back to its previous length and none of `records` counts as appended
    /// (if the cut fails too, the log is poisoned). If the fsync fails, the records are cut back (as far as
    /// the system allows) and the log is poisoned.
    ///
    /// - Throws: `.closed`, `.poisoned`, `.recordTooLarge`, `.writeFailed`, `.syncFailed`.
    @discardableResult
    public func append(_ records: [RecordPayload]) throws(RecordLogError) -> [RecordLocation] {
        guard descriptor >= 0 else { throw .closed }
        if let poison { throw .poisoned(path: path, errno: poison) }
        var total = 0
        for record in records {
            guard record.count <= Self.maximumRecordSize else {
                throw .recordTooLarge(record.count, limit: Self.maximumRecordSize)
            }
            total += RecordFormat.recordHeaderSize + record.count
        }
        guard total > 0 else { return [] }

        let previousLength = length
        var locations: [RecordLocation] = []
        locations.reserveCapacity(records.count)
        var writer = GatheringWriter(
            fileSystem: fileSystem, descriptor: descriptor, offset: Int64(previousLength),
            capacity: min(total, Self.stagingCapacity))
        var offset = previousLength
        var failure: FileSystemError?
        for (index, record) in records.enumerated() where failure == nil {
            // Every record names its batch's start (everything before it is durable: the previous append's
            // fsync returned); the last one is the batch's commit.
            let header = record.prefix.withUnsafeBytes { prefix in
                record.body.withUnsafeBytes { body in
                    codec.recordHeader(
                        prefix: prefix, body: body, bodyChecksum: record.bodyChecksum, batch: previousLength,
                        commit: index == records.count - 1)
                }
            }
            failure = writer.stage(header) ?? writer.stage(record.prefix)
            if failure == nil {
                failure =
                    record.body.count >= Self.directWriteThreshold
                    ? writer.writeDirectly(record.body) : writer.stage(record.body)
            }
            let location = RecordLocation(offset: offset, length: UInt32(record.count))
            locations.append(location)
            offset = location.end
        }
        if failure == nil { failure = writer.flush() }
        if let failure {
            if let cut = fileSystem.truncate(descriptor, to: Int64(previousLength)) {
                poison = cut.code
            }
            throw .writeFailed(path: path, errno: failure.code)
        }
        if let error = fileSystem.sync(descriptor) {
            // What reached the disk is unknown: cut the records off, durably (best effort, so that a reopen
            // does not find records whose append failed: no later append's fsync will make the cut durable)
            // and refuse every later append.
            if fileSystem.truncate(descriptor, to: Int64(previousLength)) == nil { _ = fileSystem.sync(descriptor) }
            poison = error.code
            throw .syncFailed(path: path, errno: error.code)
        }
        length = offset
        return locations
    }

    /// Appends one record durably; the same as `append([record])`.
    @discardableResult
    public func append(_ record: [UInt8]) throws(RecordLogError) -> RecordLocation {
        try append([RecordPayload(body: record)])[0]
    }

    /// The payload of the record at `location`, checked as `read(_:prefixLength:)` says.
    ///
    /// - Throws: `.closed`, `.badLocation` when `location` is not an intact record of this log (beyond its
    ///   end, not at a record's start, or damaged since it was written), `.readFailed`.
    public func read(_ location: RecordLocation) throws(RecordLogError) -> [UInt8] {
        try read(location, prefixLength: 0).body
    }

    /// The payload of the record at `location` in two parts: its first `prefixLength` bytes (fewer when
    /// the payload is shorter) and the rest, each read into an array of its own.
    ///
    /// Every read checks the record's header (marker, header check, and that its length is the
    /// location's), so a location that is not a record's start is refused. A record that was on the disk
    /// when the log opened (it may have been damaged since) is checked against its payload checksum too; one
    /// this log appended was checksummed as it was written, in this process, and is not read a second time
    /// for its checksum (each byte is checksummed once per copy; the next open checks it, as the scan and
    /// every read then do).
    ///
    /// - Throws: as `read(_:)`.
    public func read(_ location: RecordLocation, prefixLength: Int) throws(RecordLogError) -> RecordPayload {
        guard descriptor >= 0 else { throw .closed }
        guard location.offset >= UInt64(RecordFormat.fileHeaderSize), location.end <= length else {
            throw .badLocation(path: path, offset: location.offset)
        }
        return try RecordReader.read(
            location, prefixLength: prefixLength, from: descriptor, fileSystem: fileSystem, path: path, codec: codec,
            appendedFrom: appendedFrom)
    }

    /// A reader of this log's records by location, with a descriptor of its own, usable from any thread
    /// while the log appends (it reads only records an append already made durable). It checks records as
    /// `read(_:prefixLength:)` does.
    public func makeReader() throws(RecordLogError) -> RecordReader {
        try RecordReader(path: path, fileSystem: fileSystem, appendedFrom: appendedFrom)
    }

    /// Closes the file, releasing its lock. Later appends throw `.closed`. Idempotent; `deinit` calls it.
    public func close() {
        guard descriptor >= 0 else { return }
        fileSystem.close(descriptor)
        descriptor = -1
    }
}

/// Deliberately not `Sendable`: see the type's documentation.
@available(*, unavailable)
extension RecordLog: Sendable {}

/// Writes a batch's parts at consecutive offsets: small parts gathered in a staging buffer, large ones
/// written from their own storage once what is staged before them is written.
private struct GatheringWriter {
    let fileSystem: any FileSystem
    let descriptor: Int32
    /// Where the next byte written (staged or direct) goes.
    private var offset: Int64
    private var staging: [UInt8] = []
    private let capacity: Int

    init(fileSystem: any FileSystem, descriptor: Int32, offset: Int64, capacity: Int) {
        self.fileSystem = fileSystem
        self.descriptor = descriptor
        self.offset = offset
        self.capacity = capacity
        staging.reserveCapacity(capacity)
    }

    /// Adds `bytes` to the staging buffer, writing it first if they would not fit.
    mutating func stage(_ bytes: [UInt8]) -> FileSystemError? {
        if !staging.isEmpty, staging.count + bytes.count > capacity, let error = flush() { return error }
        staging.append(contentsOf: bytes)
        return staging.count >= capacity ? flush() : nil
    }

    /// Writes what is staged, then `bytes` from their own storage.
    mutating func writeDirectly(_ bytes: [UInt8]) -> FileSystemError? {
        if let error = flush() { return error }
        if let error = bytes.withUnsafeBytes({ fileSystem.writeAll(descriptor, $0, at: offset) }) { return error }
        offset += Int64(bytes.count)
        return nil
    }

    /// Writes what is staged.
    mutating func flush() -> FileSystemError? {
        guard !staging.isEmpty else { return nil }
        if let error = staging.withUnsafeBytes({ fileSystem.writeAll(descriptor, $0, at: offset) }) { return error }
        offset += Int64(staging.count)
        staging.removeAll(keepingCapacity: true)
        return nil
    }
}
