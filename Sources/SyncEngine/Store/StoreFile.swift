import Dispatch
import SyncStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a record is in a store file: enough to read it back without scanning.
struct StoreLocation: Sendable, Hashable {
    /// The offset of the record's payload in the file.
    var offset: UInt64
    /// The payload's length.
    var length: Int
}

/// A local store's file: its `RecordLog` on a serial dispatch queue of its own, so that blocking file work
/// (reading at open, writing, fsync) never runs on Swift's cooperative pool or on an engine actor, and a
/// read-only descriptor from which records are read back by location from any thread.
///
/// Appends are serialized on the queue; reads may run on any thread at any time, concurrently with
/// appends (they read only records an append already made durable).
final class StoreFile: Sendable {
    let path: String
    private let queue: DispatchQueue
    private let log: LogBox
    private let reader: Reader

    /// The `RecordLog`, touched only on `queue`.
    private final class LogBox: @unchecked Sendable {
        // @unchecked Sendable: `log` is only used inside blocks running on the owning StoreFile's serial
        // queue (init hands it over before any block runs).
        var log: RecordLog?
        var length: UInt64
        init(_ log: RecordLog, length: UInt64) {
            self.log = log
            self.length = length
        }
    }

    private init(path: String, queue: DispatchQueue, log: LogBox, reader: Reader) {
        self.path = path
        self.queue = queue
        self.log = log
        self.reader = reader
    }

    /// What opening found besides the records.
    struct Opened {
        /// Bytes of an incomplete final record cut off (0 when the file ended cleanly).
        var discardedBytes: Int
    }

    /// Opens (or creates) the store file at `path` on a queue of its own and calls `visit` there with each
    /// intact record, in order, with its location. Nothing of the records is kept beyond `visit`.
    static func open(
        path: String,
        visit: @escaping @Sendable (StoreLocation, [UInt8]) throws(SyncError) -> Void
    ) async throws(SyncError) -> (StoreFile, Opened) {
        let queue = DispatchQueue(label: "SyncEngine.store")
        return try await run(on: queue) { () throws(SyncError) -> (StoreFile, Opened) in
            let log: RecordLog
            do {
                log = try RecordLog(path: path)
            } catch {
                throw .storageFailure("cannot open \(path): \(error)")
            }
            var offset = UInt64(7)
            for record in log.recoveredRecords {
                offset += 8
                try visit(StoreLocation(offset: offset, length: record.count), record)
                offset += UInt64(record.count)
            }
            let reader: Reader
            do throws(SyncError) {
                reader = try Reader(path: path)
            } catch {
                log.close()
                throw error
            }
            let file = StoreFile(path: path, queue: queue, log: LogBox(log, length: offset), reader: reader)
            return (file, Opened(discardedBytes: log.truncatedBytes))
        }
    }

    /// Appends `records` durably (one fsync) and returns their locations.
    func append(_ records: [[UInt8]]) async throws(SyncError) -> [StoreLocation] {
        try await Self.run(on: queue) { [log, path] () throws(SyncError) -> [StoreLocation] in
            guard let file = log.log else { throw .storageFailure("the local store \(path) is closed") }
            do {
                try file.append(records)
            } catch {
                throw .storageFailure("cannot write the local store \(path): \(error)")
            }
            var locations: [StoreLocation] = []
            locations.reserveCapacity(records.count)
            for record in records {
                log.length += 8
                locations.append(StoreLocation(offset: log.length, length: record.count))
                log.length += UInt64(record.count)
            }
            return locations
        }
    }

    /// Reads the records at `locations`, off the cooperative pool.
    func read(_ locations: [StoreLocation]) async throws(SyncError) -> [[UInt8]] {
        try await Self.run(on: Self.readQueue) { [reader] () throws(SyncError) -> [[UInt8]] in
            var records: [[UInt8]] = []
            records.reserveCapacity(locations.count)
            for location in locations { records.append(try reader.read(location)) }
            return records
        }
    }

    /// Reads the record at `location` on the calling thread (which must not be the cooperative pool's).
    func readBlocking(_ location: StoreLocation) throws(SyncError) -> [UInt8] {
        try reader.read(location)
    }

    /// Closes the file (unlocking it for another app); later appends throw. Waits for an append in flight.
    func close() async {
        await Self.run(on: queue) { [log, reader] in
            log.log?.close()
            log.log = nil
            reader.close()
        }
    }

    // MARK: Queues

    /// Where reads of all stores run: concurrent, off the cooperative pool.
    private static let readQueue = DispatchQueue(label: "SyncEngine.store.reads", attributes: .concurrent)

    /// Runs `body` on `queue` and returns its result to the awaiting task.
    private static func run<T: Sendable, E: Error>(
        on queue: DispatchQueue,
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(E) -> T in try body() })
            }
        }
        return try result.get()
    }

    // MARK: Reader

    /// A read-only descriptor on the file: `pread` and a checksum check, from any thread.
    private final class Reader: Sendable {
        private let descriptor: Locked<Int32>
        private let path: String

        /// Opens `path` for reading and takes the store's exclusive lock (one app per store file).
        init(path: String) throws(SyncError) {
            let descriptor = SyncEngine.openReadOnly(path)
            guard descriptor >= 0 else { throw .storageFailure("cannot open \(path) for reading (errno \(errno))") }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                SyncEngine.closeDescriptor(descriptor)
                if code == EWOULDBLOCK { throw .storeInUse(path: path) }
                throw .storageFailure("cannot lock \(path) (errno \(code))")
            }
            self.descriptor = Locked(descriptor)
            self.path = path
        }

        func read(_ location: StoreLocation) throws(SyncError) -> [UInt8] {
            let fd = descriptor.withLock { $0 }
            guard fd >= 0 else { throw .storageFailure("the local store \(path) is closed") }
            guard location.offset >= 8, let offset = off_t(exactly: location.offset - 8) else {
                throw .storageFailure("bad record location \(location.offset) in \(path)")
            }
            var bytes = [UInt8](repeating: 0, count: location.length + 8)
            var filled = 0
            while filled < bytes.count {
                let result = bytes.withUnsafeMutableBytes { buffer in
                    pread(fd, buffer.baseAddress! + filled, buffer.count - filled, offset + off_t(filled))
                }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw .storageFailure("cannot read \(path) (errno \(errno))")
                }
                if result == 0 { throw .storageFailure("\(path) ends before the record at \(location.offset)") }
                filled += result
            }
            let payload = Array(bytes[8...])
            let stored = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
            guard CRC32.checksum(payload) == stored else {
                throw .storeCorrupted(path: path, offset: location.offset - 8)
            }
            return payload
        }

        func close() {
            let fd = descriptor.withLock { fd in
                defer { fd = -1 }
                return fd
            }
            if fd >= 0 { SyncEngine.closeDescriptor(fd) }
        }

        deinit { close() }
    }
}

private func openReadOnly(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }

private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
        _ = Glibc.close(descriptor)
    #elseif canImport(Darwin)
        _ = Darwin.close(descriptor)
    #endif
}
