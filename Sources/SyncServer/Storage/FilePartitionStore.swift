import SyncStorage
import SyncStreams
import SyncWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `PartitionStore` on files: one append-only, checksummed `RecordLog` per partition in `directory`,
/// so a server's logs survive restarts, crashes and power loss.
///
/// - **Durable before acknowledged:** `append` returns once the records are fsynced; the server
///   acknowledges an upload only after that.
/// - **Recovered at start:** a partition's file is opened (and a torn final record cut off, with a
///   `.warn` log event naming the partition and the bytes cut) the first time the server asks for its
///   summaries; corruption in the middle of a file is an error for that partition only, never silently
///   skipped.
/// - **One server per directory:** the directory's `LOCK` file is held (`flock`) while the store is
///   open; a second store on the same directory fails with `.locked`.
/// - **Memory:** an index entry per changeset (its location and summary); bytes are read back from the
///   file when sent.
/// - **Descriptors:** two per open partition (the log and a reader), plus the lock file. A partition's
///   file is opened by `summaries` and closed by `unload` (the server unloads partitions it evicted), so
///   the descriptors in use follow the partitions the server keeps loaded, not every partition ever
///   served.
///
/// File names come from the partition name (`StoreFileName`: injective, safe on case-insensitive file
/// systems, hashed when long). Blocking file work runs on dispatch queues of the store's own, never on
/// Swift's cooperative pool.
///
/// Record layout (little-endian): `u8 1` (format), `u64 serverVersion`, `u64 clientFileID`,
/// `u64 clientVersion`, `u16 owner length`, owner (UTF-8), changeset bytes; an entry with an origin or a
/// duplicate mark (`StoredChangeset.origin`, `.duplicateOf`) has format 2, which adds them after
/// `clientVersion` (see `ChangesetRecord`). Logs written before format 2 are read as they are.
///
/// Beside each partition's log, a server with a maximum offline time keeps `<partition>.clients`, a record
/// log of `ClientFileRecord`s (when each client file was last seen, which were forgotten), compacted when
/// it is opened (see `ClientFileLog`), and every partition has `<partition>.history`, the identity of its
/// log (see `HistoryFile`).
public final class FilePartitionStore: PartitionStore {
    /// The log entries keep their origins and duplicate marks (format 2).
    public var storesChangesetOrigins: Bool { true }

    /// The directory holding the logs.
    public let directory: String

    /// The lock file's descriptor; -1 once closed.
    private let lockDescriptor: Locked<Int32>
    /// The open partitions' logs, by exact name (`PartitionName`, as the files are named by bytes).
    private let files = Locked<[PartitionName: PartitionFile]>([:])
    /// The open side files of client-file records (see `ClientFileLog`), by partition.
    private let clientLogs = Locked<[PartitionName: ClientFileLog]>([:])
    /// The partitions' history ids read so far (see `HistoryFile`).
    private let historyIDs = Locked<[PartitionName: UInt64]>([:])
    private let readQueue = BlockingQueue(label: "SyncServer.file-store.read", concurrent: true)
    private let logger: SyncLogger
    /// The system calls of the partitions' logs and of directory creation.
    private let fileSystem: any FileSystem
    /// How long each fsync (of a log, or of a directory) took: the server's metrics show it.
    package let syncLatency = LatencyHistogram()

    /// The category of the store's log events.
    static let logCategory = "sync.server.storage"

    /// Opens a store in `directory`, creating it and any missing parents. What recovery does to a
    /// partition's file (a torn final record cut off) is logged at `.warn` through `logger` (`nil`:
    /// standard error) when `logLevel` allows: give the server's configuration the same two.
    ///
    /// - Throws: `FilePartitionStoreError.cannotOpen` when the directory cannot be created or opened,
    ///   `.locked` when another store (in this or another process) has it open.
    public convenience init(
        directory: String,
        logLevel: SyncLogLevel = .warn,
        logger: (@Sendable (SyncLogEvent) -> Void)? = nil
    ) throws(FilePartitionStoreError) {
        try self.init(directory: directory, logLevel: logLevel, logger: logger, fileSystem: SystemFileSystem())
    }

    /// Opens a store as above, creating (and fsyncing) directories through `fileSystem` (tests inject
    /// failures through it).
    package init(
        directory: String,
        logLevel: SyncLogLevel,
        logger: (@Sendable (SyncLogEvent) -> Void)?,
        fileSystem: any FileSystem
    ) throws(FilePartitionStoreError) {
        self.directory = directory
        self.logger = SyncLogger(level: logLevel, sink: logger)
        self.fileSystem = TimedFileSystem(base: fileSystem, syncLatency: syncLatency)
        // Like `mkdir -p`: every missing parent too, each fsynced into its parent.
        if let (path, code) = DurableRename.createDirectories(directory, fileSystem: fileSystem) {
            throw .cannotOpen(path: path, errno: code)
        }
        // The lock file goes through `fileSystem` like every other file (its open, lock and close).
        let lockPath = directory + "/LOCK"
        let descriptor: Int32
        switch fileSystem.open(lockPath, flags: O_CREAT | O_RDWR | O_CLOEXEC, mode: 0o644) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw .cannotOpen(path: lockPath, errno: error.code)
        }
        // A lock this process just let go of may still be held by a child being spawned: wait briefly.
        if let error = FileLockWait.lockExclusively(descriptor, fileSystem: fileSystem) {
            fileSystem.close(descriptor)
            throw error.code == EWOULDBLOCK ? .locked(path: directory) : .cannotOpen(path: lockPath, errno: error.code)
        }
        lockDescriptor = Locked(descriptor)
    }

    deinit {
        // Not closed by its owner: close the files once their queues are idle, then the lock.
        let (descriptor, open) = takeForClosing()
        guard descriptor >= 0 else { return }
        for file in open { file.closeDetached() }
        for log in takeClientLogs() { log.closeDetached() }
        fileSystem.close(descriptor)
    }

    /// Closes every partition's file (after appends in progress finish) and then releases the directory,
    /// so another store may open it when this returns. Later calls throw `.closed`. Idempotent.
    public func close() async {
        let (descriptor, open) = takeForClosing()
        guard descriptor >= 0 else { return }
        for file in open { await file.close() }
        for log in takeClientLogs() { await log.close() }
        fileSystem.close(descriptor)
    }

    private func takeClientLogs() -> [ClientFileLog] {
        clientLogs.withLock { logs in
            defer { logs = [:] }
            return Array(logs.values)
        }
    }

    private func takeForClosing() -> (Int32, [PartitionFile]) {
        let descriptor = lockDescriptor.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
        let open = files.withLock { files in
            defer { files = [:] }
            return Array(files.values)
        }
        return (descriptor, open)
    }

    private func path(of partition: String) -> String {
        directory + "/" + StoreFileName.forPartition(partition, suffix: ".log")
    }

    public func summaries(of partition: String) async throws -> [StoredChangesetSummary] {
        guard lockDescriptor.withLock({ $0 >= 0 }) else { throw FilePartitionStoreError.closed }
        if let file = files.withLock({ $0[PartitionName(partition)] }) { return file.summaries }
        let path = path(of: partition)
        let file = try await PartitionFile.open(path: path, partition: partition, fileSystem: fileSystem)
        if file.recovery.truncatedBytes > 0 {
            logger.log(
                .warn, Self.logCategory,
                "partition \(partition): cut \(file.recovery.truncatedBytes) bytes of a final record torn by a crash "
                    + "(\(path) now ends at byte \(file.recovery.truncatedAt.map(String.init) ?? "?"))")
        }
        files.withLock { $0[PartitionName(partition)] = file }
        return file.summaries
    }

    public func read(_ versions: ClosedRange<UInt64>, of partition: String) async throws -> [StoredChangeset] {
        guard let file = files.withLock({ $0[PartitionName(partition)] }) else {
            throw FilePartitionStoreError.notOpen(partition: partition)
        }
        let locations = file.locations(of: versions)
        let reader = file.reader
        let partitionName = partition
        return try await readQueue.run { () throws(FilePartitionStoreError) -> [StoredChangeset] in
            var changesets: [StoredChangeset] = []
            changesets.reserveCapacity(locations.count)
            for location in locations {
                let payload: [UInt8]
                do throws(RecordLogError) { payload = try reader.read(location) } catch {
                    throw .storage(partition: partitionName, error)
                }
                guard let changeset = ChangesetRecord.decode(consume payload) else {
                    throw .malformedRecord(partition: partitionName, offset: location.offset)
                }
                changesets.append(changeset)
            }
            return changesets
        }
    }

    /// The id in `<partition>.history`, created (durably) with a new random id the first time (see
    /// `HistoryFile`).
    public func historyID(of partition: String) async throws -> UInt64 {
        guard lockDescriptor.withLock({ $0 >= 0 }) else { throw FilePartitionStoreError.closed }
        if let id = historyIDs.withLock({ $0[PartitionName(partition)] }) { return id }
        let path = directory + "/" + StoreFileName.forPartition(partition, suffix: ".history")
        let id = try await readQueue.run { () throws(FilePartitionStoreError) -> UInt64 in
            try HistoryFile.historyID(at: path, partition: partition)
        }
        historyIDs.withLock { $0[PartitionName(partition)] = id }
        return id
    }

    /// The live records of `<partition>.clients` (the latest per client file), opening (and, when most of
    /// its records are superseded, compacting) the file the first time.
    public func clientFileRecords(of partition: String) async throws -> [ClientFileRecord] {
        guard lockDescriptor.withLock({ $0 >= 0 }) else { throw FilePartitionStoreError.closed }
        if let open = clientLogs.withLock({ $0[PartitionName(partition)] }) {
            // Read again after a failed load: close and reopen, which reads the file.
            clientLogs.withLock { $0[PartitionName(partition)] = nil }
            await open.close()
        }
        let path = directory + "/" + StoreFileName.forPartition(partition, suffix: ".clients")
        let (log, records) = try await ClientFileLog.open(path: path, partition: partition)
        clientLogs.withLock { $0[PartitionName(partition)] = log }
        return records
    }

    /// Appends to `<partition>.clients` durably (one fsync).
    public func appendClientFileRecords(_ records: [ClientFileRecord], to partition: String) async throws {
        guard !records.isEmpty else { return }
        let log: ClientFileLog
        if let open = clientLogs.withLock({ $0[PartitionName(partition)] }) {
            log = open
        } else {
            _ = try await clientFileRecords(of: partition)
            guard let open = clientLogs.withLock({ $0[PartitionName(partition)] }) else {
                throw FilePartitionStoreError.notOpen(partition: partition)
            }
            log = open
        }
        try await log.append(records)
    }

    /// Closes the partition's files (after their appends in progress: the log, freeing its two descriptors
    /// and its index, and the `.clients` side file); `summaries` and `clientFileRecords` open them again.
    /// Nothing happens for a partition that is not open.
    public func unload(_ partition: String) async {
        if let clients = clientLogs.withLock({ $0.removeValue(forKey: PartitionName(partition)) }) {
            await clients.close()
        }
        guard let file = files.withLock({ $0.removeValue(forKey: PartitionName(partition)) }) else { return }
        await file.close()
    }

    /// The partitions with a log in the directory (`<encoded name>.log`: encoded names hold no `.`), counted
    /// on a thread of the store's own.
    public func partitionCount() async throws -> Int? {
        guard lockDescriptor.withLock({ $0 >= 0 }) else { throw FilePartitionStoreError.closed }
        let directory = directory
        return try await readQueue.run { () throws(FilePartitionStoreError) -> Int? in
            guard let stream = opendir(directory) else { throw .cannotOpen(path: directory, errno: errno) }
            defer { closedir(stream) }
            var count = 0
            while let entry = readdir(stream) {
                let isLog = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    let name = raw.prefix { $0 != 0 }
                    return name.count > 4 && name.suffix(4).elementsEqual(".log".utf8)
                }
                if isLog { count += 1 }
            }
            return count
        }
    }

    /// Whether the partition's log exists (open, or a file in the directory), checked on a thread of the
    /// store's own.
    public func holdsPartition(_ partition: String) async throws -> Bool {
        guard lockDescriptor.withLock({ $0 >= 0 }) else { throw FilePartitionStoreError.closed }
        if files.withLock({ $0[PartitionName(partition)] != nil }) { return true }
        let path = path(of: partition)
        return try await readQueue.run { () throws(FilePartitionStoreError) -> Bool in
            var status = stat()
            guard stat(path, &status) == 0 else {
                if errno == ENOENT { return false }
                throw .cannotOpen(path: path, errno: errno)
            }
            return true
        }
    }

    /// How many partitions' files are open.
    public var openPartitionCount: Int { files.withLock { $0.count } }

    public func append(_ changesets: [StoredChangeset], to partition: String) async throws {
        guard !changesets.isEmpty else { return }
        let file: PartitionFile
        if let open = files.withLock({ $0[PartitionName(partition)] }) {
            file = open
        } else {
            _ = try await summaries(of: partition)
            guard let open = files.withLock({ $0[PartitionName(partition)] }) else {
                throw FilePartitionStoreError.notOpen(partition: partition)
            }
            file = open
        }
        try await file.append(changesets)
    }
}

/// Why a `FilePartitionStore` operation failed.
public enum FilePartitionStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The directory (or its lock file) could not be created or opened.
    case cannotOpen(path: String, errno: Int32)
    /// Another store holds the directory.
    case locked(path: String)
    /// A partition's record log failed (I/O error, corruption, a full disk…).
    case storage(partition: String, RecordLogError)
    /// An intact record that is not a stored changeset.
    case malformedRecord(partition: String, offset: UInt64)
    /// A read of a partition whose summaries were never loaded.
    case notOpen(partition: String)
    /// The store was closed.
    case closed

    public var description: String {
        switch self {
        case .cannotOpen(let path, let code): "cannot open \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .locked(let path): "\(path) is in use by another server"
        case .storage(let partition, let error): "partition \(partition): \(error)"
        case .malformedRecord(let partition, let offset):
            "partition \(partition): the record at offset \(offset) is not a changeset"
        case .notOpen(let partition): "partition \(partition) was read before it was loaded"
        case .closed: "the store is closed"
        }
    }
}
