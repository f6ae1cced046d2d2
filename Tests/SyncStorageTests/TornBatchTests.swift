import Foundation
import SyncStreams
import Testing

@testable import SyncStorage

/// A batch is several writes and one fsync; after a power loss its pages can reach the disk in any order.
/// These tests cut the power (every later fsync and truncate fails, changing nothing) while a batch is
/// written, with chosen writes lost (zeros land instead), and check what reopening makes of the file.
@Suite("Torn batches", .timeLimit(.minutes(5)))
struct TornBatchTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("log") }

    /// A body written on its own (`pwrite` of its own storage), so a batch holding it takes three writes:
    /// what is staged before it, the body, what is staged after it.
    static let large = [UInt8](repeating: 0x5A, count: RecordLog.directWriteThreshold)

    /// Appends a durable batch, then `torn` with the power cut and the writes `lost` lost; returns the
    /// durable length and the file's length after the crash.
    func crash(
        durable: [[UInt8]], torn: [[UInt8]], lost: Set<Int>
    ) throws -> (durable: Int, size: Int) {
        let fileSystem = FaultyFileSystem()
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append(durable)
        let durableLength = RawFile.read(path).count
        fileSystem.faults.withLock {
            $0.lostWrites = lost
            $0.writes = 0
            $0.powerCut = true
        }
        #expect(throws: RecordLogError.syncFailed(path: path, errno: EIO)) { try log.append(torn) }
        #expect(fileSystem.faults.withLock { $0.writes } == 3)  // the batch went out in three writes
        log.close()
        let size = RawFile.read(path).count
        #expect(size == durableLength + torn.reduce(0) { $0 + 22 + $1.count })  // all of it, on disk
        return (durableLength, size)
    }

    @Test(
        "a batch whose later pages landed and an earlier one did not (or whose commit did not) is cut whole and reported, not called corruption",
        arguments: [0, 1, 2])
    func tornBatchIsCut(lost: Int) throws {
        let (durable, size) = try crash(durable: [[1], [2, 2]], torn: [[3], Self.large, [4, 4]], lost: [lost])
        let (log, records) = try openLog(path)
        #expect(records == [[1], [2, 2]])
        #expect(
            log.recovery
                == RecordLog.Recovery(recordCount: 2, truncatedBytes: size - durable, truncatedAt: UInt64(durable)))
        #expect(RawFile.read(path).count == durable)
        try log.append([5])
        log.close()
        #expect(try openLog(path).1 == [[1], [2, 2], [5]])
    }

    @Test("damage in a durable batch is corruption, even when the batch after it is torn")
    func damageBeforeATornBatchIsCorruption() throws {
        _ = try crash(durable: [[1], [2, 2]], torn: [[3], Self.large, [4, 4]], lost: [1])
        var bytes = RawFile.read(path)
        let second = 16 + 22 + 1
        bytes[second + 22] ^= 0x04  // the durable batch's second record's payload
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: UInt64(second))) { _ = try RecordLog(path: path) }
        #expect(RawFile.read(path) == bytes)
    }

    @Test("a lost page inside a durable batch that later batches follow is corruption; nothing is cut")
    func lostPageInADurableBatchIsCorruption() throws {
        do {
            let log = try RecordLog(path: path)
            try log.append([[1], Self.large, [3]])
            try log.append([[4]])
        }
        var bytes = RawFile.read(path)
        let second = 16 + 22 + 1
        for index in second..<(second + 22 + Self.large.count) { bytes[index] = 0 }
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: UInt64(second))) { _ = try RecordLog(path: path) }
        #expect(RawFile.read(path) == bytes)
    }

    /// The bytes of another record log (version 3, another salt) holding `records`, and of version 2 records.
    func foreignRecordBytes(_ records: [[UInt8]]) throws -> [UInt8] {
        let other = directory.file("other")
        do {
            let log = try RecordLog(path: other)
            for record in records { try log.append(record) }
        }
        return RawFile.read(other) + records.flatMap(RawFile.recordV2)
    }

    @Test("a torn batch is cut even when its landed records' payloads hold the bytes of valid records of other logs")
    func foreignRecordBytesInATornBatch() throws {
        let foreign = try foreignRecordBytes([[7], [8, 8], Array(repeating: 9, count: 300)])
        let (durable, size) = try crash(durable: [[1]], torn: [foreign, Self.large, foreign], lost: [1])
        let (log, records) = try openLog(path)
        #expect(records == [[1]])
        #expect(log.recovery.truncatedBytes == size - durable)
    }

    @Test(
        "payloads holding record bytes (this log's own layout and salt, other logs', zeros, markers) never cause a cut")
    func recordBytesInPayloadsNeverCut() throws {
        let foreign = try foreignRecordBytes([[7], [8, 8]])
        let payloads: [[UInt8]]
        do {
            let log = try RecordLog(path: path)
            let salt = RawFile.salt(path)
            let own = RawFile.batch([[6], [6, 6]], salt: salt, at: 16) + RawFile.batch([[5]], salt: salt, at: 63)
            payloads = [
                own, foreign, [UInt8](repeating: 0, count: 100), [UInt8](repeating: 0xA5, count: 60),
                Array(own.prefix(30)), own + [0xA5, 1, 2],
            ]
            try log.append(Array(payloads[0..<3]))
            for payload in payloads[3...] { try log.append(payload) }
        }
        let (log, records) = try openLog(path)
        #expect(records == payloads)
        #expect(log.recovery.truncatedBytes == 0)
        log.close()
        // And damage before them is still corruption.
        var bytes = RawFile.read(path)
        bytes[16 + 22] ^= 1
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: 16)) { _ = try RecordLog(path: path) }
    }

    @Test("after a failed fsync the cut is fsynced too (no later append's fsync will make it durable)")
    func cutAfterFailedSyncIsSynced() throws {
        let fileSystem = FaultyFileSystem()
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        try log.append([1])
        fileSystem.faults.withLock {
            $0.events = []
            $0.syncErrors = [EIO]
        }
        #expect(throws: RecordLogError.syncFailed(path: path, errno: EIO)) { try log.append([2]) }
        #expect(fileSystem.faults.withLock { $0.events } == ["write", "sync failed", "truncate", "sync"])
    }

    // MARK: - Version 2 files

    @Test("a version 2 file opens: its records are converted to version 3 in order, a torn tail is cut and reported")
    func version2FileIsConverted() throws {
        let records: [[UInt8]] = (0..<40).map { [UInt8](repeating: UInt8($0), count: $0 * 1000) } + [[1]]
        try RawFile.write(RawFile.headerV2 + records.flatMap(RawFile.recordV2) + [0xA5, 1, 2], to: path)
        let (log, recovered) = try openLog(path)
        #expect(recovered == records)
        #expect(log.recovery.truncatedBytes == 3)
        #expect(log.recovery.recordCount == records.count)
        #expect(RawFile.read(path).starts(with: Array("SSLOG".utf8) + [3, 0, 0]))
        try log.append([2])
        log.close()
        #expect(try openLog(path).1 == records + [[2]])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["log"])
    }

    @Test("a corrupted version 2 file is refused as before and left untouched")
    func corruptedVersion2File() throws {
        var bytes = RawFile.headerV2 + RawFile.recordV2([1, 1]) + RawFile.recordV2([2])
        bytes[8 + 13] ^= 1
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: 8)) { _ = try RecordLog(path: path) }
        #expect(RawFile.read(path) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["log"])
    }
}
