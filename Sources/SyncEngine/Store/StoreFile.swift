import SyncStorage

/// A local store's file: its `RecordLog` on a serial queue of its own, so that blocking file work
/// (reading at open, writing, fsync) never runs on Swift's cooperative pool or on an engine actor, and a
/// `RecordReader` that reads records back by location from any thread.
///
/// Appends are serialized on the queue; reads may run at any time, concurrently with appends (they read
/// only records an append already made durable).
final class StoreFile: Sendable {
    let path: String
    private let fileSystem: any FileSystem
    private let queue: BlockingQueue
    private let log: LogBox
    private let reader: RecordReader

    /// The `RecordLog`, touched only on `queue`.
    private final class LogBox: @unchecked Sendable {
        // @unchecked Sendable: `log` is only used inside blocks running on the owning StoreFile's serial
        // queue (`open` hands it over before any block runs).
        var log: RecordLog?
        init(_ log: RecordLog) { self.log = log }
    }

    private init(path: String, fileSystem: any FileSystem, queue: BlockingQueue, log: LogBox, reader: RecordReader) {
        self.path = path
        self.fileSystem = fileSystem
        self.queue = queue
        self.log = log
        self.reader = reader
    }

    /// Opens (or creates) the store file at `path` on a queue of its own, through `fileSystem`'s system
    /// calls, and calls `visit` there with each intact record, in order, with its location and its checked
    /// checksum (which gives the CRC-32 of a changeset's bytes without reading them again). Nothing of the records is kept beyond `visit`. Returns the
    /// file and how many bytes of a torn final record were cut.
    ///
    /// - Throws: `.storeInUse` when another app holds the file's lock, `.storeCorrupted` for damage that is
    ///   not a torn final write, `.storageFailure` otherwise.
    ///
    /// `reportedPath` (default: `path`) is the path the file is known by in errors and in `path`: a store
    /// built at a temporary path and then renamed into place (a client reset) gives its final path.
    static func open(
        path: String,
        fileSystem: any FileSystem = SystemFileSystem(),
        reportedPath: String? = nil,
        visit: @escaping @Sendable (RecordLocation, [UInt8], RecordChecksum) -> Void
    ) async throws(SyncError) -> (file: StoreFile, discardedBytes: Int) {
        let queue = BlockingQueue(label: "SyncEngine.store")
        let name = reportedPath ?? path
        return try await queue.run { () throws(SyncError) -> (StoreFile, Int) in
            let log: RecordLog
            let reader: RecordReader
            do throws(RecordLogError) {
                log = try RecordLog(path: path, fileSystem: fileSystem) { location, payload, checksum in
                    visit(location, Array(payload), checksum)
                }
                reader = try log.makeReader()
            } catch {
                throw SyncError(error, path: name)
            }
            let file = StoreFile(path: name, fileSystem: fileSystem, queue: queue, log: LogBox(log), reader: reader)
            return (file, log.recovery.truncatedBytes)
        }
    }

    /// Appends `records` durably (one fsync) and returns their locations. A log poisoned by an earlier
    /// failed fsync is reopened first (see `reopen`), so a transient disk error fails the appends made
    /// while it lasts, not every later one.
    func append(_ records: [RecordPayload]) async throws(SyncError) -> [RecordLocation] {
        try await appendChecksummed(records).locations
    }

    /// Appends `records` as `append` does and also returns the CRC-32 of each one's body
    /// (`CRC32.checksum(body)`, a local changeset's digest), computed once, on the file's queue: each
    /// record's checksum is derived from it, so the bytes are checksummed once, not once for the record and
    /// again for the digest.
    func appendChecksummed(
        _ records: [RecordPayload]
    ) async throws(SyncError) -> (locations: [RecordLocation], bodyChecksums: [UInt32]) {
        try await queue.run { [self] () throws(SyncError) -> ([RecordLocation], [UInt32]) in
            guard var file = log.log else { throw .storageFailure("the local store \(path) is closed") }
            var records = records
            for index in records.indices where records[index].bodyChecksum == nil {
                records[index].bodyChecksum = CRC32.checksum(records[index].body)
            }
            do throws(RecordLogError) {
                if file.refusesAppends {
                    file = try reopen(file)
                    log.log = file
                }
                return (try file.append(records), records.map { $0.bodyChecksum ?? 0 })
            } catch {
                throw SyncError(error, path: path)
            }
        }
    }

    /// Opens the file of the poisoned `old` log afresh (on `queue`), holding exactly what `old` held
    /// durably: what survived of the append whose fsync failed is cut, durably. Throws when the file
    /// cannot be opened or cut, or is shorter than `old` (durable records gone); `old` stays then, and the
    /// next append tries again.
    private func reopen(_ old: RecordLog) throws(RecordLogError) -> RecordLog {
        let durable = old.byteCount
        old.close()
        let fresh = try RecordLog(path: path, fileSystem: fileSystem)
        do throws(RecordLogError) {
            if fresh.byteCount < durable { throw .corrupted(path: path, offset: fresh.byteCount) }
            if fresh.byteCount > durable { try fresh.cut(to: durable) }
        } catch {
            fresh.close()
            throw error
        }
        return fresh
    }

    /// Reads the records at `locations`, off the cooperative pool, each split after
    /// `Record.changesetPrefixLength` bytes (a changeset's bytes in an array of their own).
    func read(_ locations: [RecordLocation]) async throws(SyncError) -> [RecordPayload] {
        try await Self.readQueue.run { [self] () throws(SyncError) -> [RecordPayload] in
            try locations.map { location throws(SyncError) in try readBlocking(location) }
        }
    }

    /// Reads the record at `location` on the calling thread (which must not be the cooperative pool's),
    /// split as `read(_:)` does.
    func readBlocking(_ location: RecordLocation) throws(SyncError) -> RecordPayload {
        do throws(RecordLogError) {
            return try reader.read(location, prefixLength: Record.changesetPrefixLength)
        } catch {
            throw SyncError(error, path: path)
        }
    }

    /// Closes the file (unlocking it for another app); later appends and reads throw. Waits for an append
    /// in flight.
    func close() async {
        await queue.run { [log, reader] in
            log.log?.close()
            log.log = nil
            reader.close()
        }
    }

    /// Where reads of all stores run: concurrent, off the cooperative pool.
    private static let readQueue = BlockingQueue(label: "SyncEngine.store.reads", concurrent: true)
}

extension SyncError {
    /// The engine's view of a record log failure on the store at `path`.
    init(_ error: RecordLogError, path: String) {
        switch error {
        case .locked: self = .storeInUse(path: path)
        case .corrupted(_, let offset), .badLocation(_, let offset): self = .storeCorrupted(path: path, offset: offset)
        default: self = .storageFailure("\(error)")
        }
    }
}
