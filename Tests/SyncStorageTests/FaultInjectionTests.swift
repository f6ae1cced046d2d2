import Foundation
import SyncStreams
import Testing

@testable import SyncStorage

/// The real file system, with failures injected into chosen calls.
final class FaultyFileSystem: FileSystem {
    struct Faults: Sendable {
        /// The next writes, one per entry: `nil` lets that write through (subject to `shortWrites`), a code
        /// fails it with that errno.
        var writeErrors: [Int32?] = []
        /// Bytes the writes let through have put in the file.
        var bytesWritten = 0
        /// Writes take at most this many bytes per call (short writes).
        var shortWrites: Int?
        /// The next fsyncs fail with this errno.
        var syncErrors: [Int32] = []
        /// The next truncates fail with this errno.
        var truncateErrors: [Int32] = []
        /// Reads fail with this errno.
        var readError: Int32?
        /// Counts of calls made.
        var syncs = 0
        var truncates = 0
        /// Writes made (counting from 0) whose bytes never reach the disk: zeros land instead, as a page
        /// the disk had not written when the power went leaves the file's new region zero. The write
        /// reports success.
        var lostWrites: Set<Int> = []
        /// Writes made since the faults were set.
        var writes = 0
        /// The power is gone: every fsync and truncate fails with `EIO` and changes nothing.
        var powerCut = false
        /// The sync, truncate and write calls in order ("write", "sync", "sync failed", "truncate").
        var events: [String] = []
    }

    private let real = SystemFileSystem()
    let faults = Locked(Faults())

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        real.open(path, flags: flags, mode: mode)
    }

    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        if let error = faults.withLock({ $0.readError }) { return .failure(FileSystemError(error)) }
        return real.read(descriptor, into: buffer, at: offset)
    }

    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    {
        let (error, limit, lost) = faults.withLock { faults -> (Int32?, Int?, Bool) in
            defer { faults.writes += 1 }
            faults.events.append("write")
            return (
                faults.writeErrors.isEmpty ? nil : faults.writeErrors.removeFirst(), faults.shortWrites,
                faults.lostWrites.contains(faults.writes)
            )
        }
        if let error { return .failure(FileSystemError(error)) }
        let count = min(buffer.count, limit ?? buffer.count)
        if lost {
            let zeros = [UInt8](repeating: 0, count: count)
            return zeros.withUnsafeBytes { real.write(descriptor, $0, at: offset) }
        }
        let result = real.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[0..<count]), at: offset)
        if case .success(let written) = result { faults.withLock { $0.bytesWritten += written } }
        return result
    }

    func sync(_ descriptor: Int32) -> FileSystemError? {
        let error = faults.withLock { faults -> Int32? in
            faults.syncs += 1
            let error = faults.powerCut ? EIO : faults.syncErrors.isEmpty ? nil : faults.syncErrors.removeFirst()
            faults.events.append(error == nil ? "sync" : "sync failed")
            return error
        }
        return error.map(FileSystemError.init) ?? real.sync(descriptor)
    }

    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? {
        let error = faults.withLock { faults -> Int32? in
            faults.truncates += 1
            faults.events.append("truncate")
            if faults.powerCut { return EIO }
            return faults.truncateErrors.isEmpty ? nil : faults.truncateErrors.removeFirst()
        }
        return error.map(FileSystemError.init) ?? real.truncate(descriptor, to: length)
    }

    func lockExclusively(_ descriptor: Int32) -> FileSystemError? { real.lockExclusively(descriptor) }
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { real.size(descriptor) }
    func close(_ descriptor: Int32) { real.close(descriptor) }
}

@Suite("Fault injection", .timeLimit(.minutes(5)))
struct FaultInjectionTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("log") }

    @Test(
        "a full disk (ENOSPC) or an I/O error after a short write: a typed error, the file cut back, later appends work",
        arguments: [ENOSPC, EIO])
    func writeFailure(code: Int32) throws {
        let fileSystem = FaultyFileSystem()
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append([1])
        let length = RawFile.read(path).count
        // The first write puts 5 bytes of the batch on disk, the second fails.
        fileSystem.faults.withLock {
            $0.shortWrites = 5
            $0.writeErrors = [nil, code]
            $0.bytesWritten = 0
        }
        #expect(throws: RecordLogError.writeFailed(path: path, errno: code)) {
            try log.append([[2, 2, 2, 2, 2, 2, 2], [3]])
        }
        #expect(fileSystem.faults.withLock { $0.bytesWritten } == 5)  // a torn record did reach the file…
        #expect(RawFile.read(path).count == length)  // …and was cut off
        #expect(log.byteCount == UInt64(length))
        fileSystem.faults.withLock { $0 = .init() }
        try log.append([4])
        log.close()
        let (reopened, records) = try openLog(path)
        #expect(records == [[1], [4]])
        #expect(reopened.recovery.truncatedBytes == 0)
    }

    @Test("short writes are continued until the whole batch is written")
    func shortWrites() throws {
        let fileSystem = FaultyFileSystem()
        fileSystem.faults.withLock { $0.shortWrites = 3 }
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append([[1, 2, 3, 4, 5], [6], Array(repeating: 7, count: 100)])
        log.close()
        #expect(try openLog(path).1 == [[1, 2, 3, 4, 5], [6], Array(repeating: 7, count: 100)])
    }

    @Test(
        "a failed fsync mid-append poisons the log: the append and every later one fail; a reopen finds only what was durable"
    )
    func fsyncFailurePoisons() throws {
        let fileSystem = FaultyFileSystem()
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append([1])
        let syncsBefore = fileSystem.faults.withLock { $0.syncs }
        fileSystem.faults.withLock { $0.syncErrors = [EIO] }
        #expect(throws: RecordLogError.syncFailed(path: path, errno: EIO)) { try log.append([2]) }
        #expect(throws: RecordLogError.poisoned(path: path, errno: EIO)) { try log.append([3]) }
        #expect(fileSystem.faults.withLock { $0.syncs } == syncsBefore + 2)  // not retried: the second syncs the cut
        log.close()
        #expect(try openLog(path).1 == [[1]])
    }

    @Test("a failed truncate after a failed write poisons the log too; the next open cuts the torn bytes")
    func truncateFailurePoisons() throws {
        let fileSystem = FaultyFileSystem()
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append([9])
        let length = RawFile.read(path).count
        // 4 bytes reach the file, the next write fails, and cutting them off fails too.
        fileSystem.faults.withLock {
            $0.shortWrites = 4
            $0.writeErrors = [nil, ENOSPC]
            $0.truncateErrors = [EIO]
        }
        #expect(throws: RecordLogError.writeFailed(path: path, errno: ENOSPC)) { try log.append([1, 2, 3]) }
        #expect(RawFile.read(path).count == length + 4)  // the torn bytes stayed
        fileSystem.faults.withLock { $0 = .init() }
        #expect(throws: RecordLogError.poisoned(path: path, errno: EIO)) { try log.append([4]) }
        #expect(RawFile.read(path).count == length + 4)  // nothing was appended after them
        log.close()
        let (reopened, records) = try openLog(path)
        #expect(records == [[9]])
        #expect(reopened.recovery.truncatedBytes == 4)
        #expect(RawFile.read(path).count == length)
    }

    @Test("a failed truncate of a torn tail at open is an error, not ignored")
    func truncateFailureAtOpen() throws {
        do {
            let log = try RecordLog(path: path)
            try log.append([1])
        }
        try RawFile.append([0xA5, 1, 2], to: path)
        let fileSystem = FaultyFileSystem()
        fileSystem.faults.withLock { $0.truncateErrors = [EIO] }
        #expect(throws: RecordLogError.writeFailed(path: path, errno: EIO)) {
            _ = try RecordLog(path: path, fileSystem: fileSystem)
        }
    }

    @Test("a read error at open is a typed error and releases the file")
    func readFailureAtOpen() throws {
        do { try RecordLog(path: path).append([1]) }
        let fileSystem = FaultyFileSystem()
        fileSystem.faults.withLock { $0.readError = EIO }
        #expect(throws: RecordLogError.readFailed(path: path, errno: EIO)) {
            _ = try RecordLog(path: path, fileSystem: fileSystem)
        }
        _ = try RecordLog(path: path)  // not left locked
    }
}
