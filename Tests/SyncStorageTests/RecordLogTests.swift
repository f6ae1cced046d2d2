import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncStorage

/// Opens `path` and returns the payloads it visits, with the log.
func openLog(_ path: String, fileSystem: any FileSystem = SystemFileSystem()) throws -> (RecordLog, [[UInt8]]) {
    var records: [[UInt8]] = []
    let log = try RecordLog(path: path, fileSystem: fileSystem) { _, payload in records.append(Array(payload)) }
    return (log, records)
}

@Suite struct RecordLogTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("log") }

    /// Writes `records` to a new log, each as a batch of its own (so each is durable before the next is
    /// written), and closes it.
    func writeLog(_ records: [[UInt8]]) throws {
        let log = try RecordLog(path: path)
        for record in records { try log.append(record) }
        log.close()
    }

    // MARK: - Creating, appending, reopening

    @Test("a new log holds only its 16-byte header, format version 3, with a random non-zero salt")
    func newLogHasOnlyTheHeader() throws {
        let (log, records) = try openLog(path)
        #expect(records.isEmpty)
        #expect(log.recovery == RecordLog.Recovery(recordCount: 0, truncatedBytes: 0, truncatedAt: nil))
        #expect(log.byteCount == 16)
        let salt = RawFile.salt(path)
        #expect(salt != 0)
        #expect(RawFile.read(path) == RawFile.header(salt: salt))
        let other = directory.file("other")
        _ = try RecordLog(path: other)
        #expect(RawFile.salt(other) != salt)
    }

    @Test("appended records come back after reopening, byte for byte as the format describes, at their locations")
    func appendedRecordsAreRecovered() throws {
        let records: [[UInt8]] = [[1, 2, 3], Array("héllo".utf8), [0xFF], []]
        var locations: [RecordLocation] = []
        do {
            let log = try RecordLog(path: path)
            locations.append(try log.append(records[0]))
            locations += try log.append(Array(records[1...]))
            #expect(log.byteCount == 16 + UInt64(records.reduce(0) { $0 + 22 + $1.count }))
        }
        let salt = RawFile.salt(path)
        #expect(
            RawFile.read(path)
                == RawFile.header(salt: salt) + RawFile.batch([records[0]], salt: salt, at: 16)
                + RawFile.batch(Array(records[1...]), salt: salt, at: 41))
        var visited: [RecordLocation] = []
        let reopened = try RecordLog(path: path) { location, _ in visited.append(location) }
        #expect(visited == locations)
        #expect(locations.map(\.offset) == [16, 41, 69, 92])
        for (location, record) in zip(locations, records) { #expect(try reopened.read(location) == record) }
        #expect(reopened.recovery.recordCount == 4)
    }

    @Test(
        "records given as prefix and body are stored byte for byte as one array would be, small and large bodies mixed",
        arguments: [nil, 5000])
    func recordsInTwoParts(shortWrites: Int?) throws {
        let large = (0..<(RecordLog.directWriteThreshold + 3)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let huge = Array(repeating: UInt8(0x5A), count: RecordLog.stagingCapacity + 1)
        let records = [
            RecordPayload(prefix: [1, 2], body: [3]),
            RecordPayload(prefix: [], body: []),
            RecordPayload(prefix: [9, 9, 9], body: large),
            RecordPayload(prefix: [4], body: Array(repeating: 6, count: 100)),
            RecordPayload(prefix: [], body: huge),
            RecordPayload(prefix: [8], body: []),
        ]
        let fileSystem = FaultyFileSystem()
        fileSystem.faults.withLock { $0.shortWrites = shortWrites }
        let log = try RecordLog(path: path, fileSystem: fileSystem)
        let locations = try log.append(records)
        let salt = RawFile.salt(path)
        #expect(
            RawFile.read(path) == RawFile.header(salt: salt) + RawFile.batch(records.map(\.bytes), salt: salt, at: 16))
        // Read back whole, or split at any prefix length: the same bytes, checked.
        for (location, record) in zip(locations, records) {
            #expect(try log.read(location) == record.bytes)
            for prefixLength in [0, 1, 3, 200_000] {
                let split = try log.read(location, prefixLength: prefixLength)
                #expect(split.bytes == record.bytes)
                #expect(split.prefix.count == min(prefixLength, record.count))
            }
            let reader = try log.makeReader()
            #expect(try reader.read(location, prefixLength: record.prefix.count) == record)
        }
        log.close()
        #expect(try openLog(path).1 == records.map(\.bytes))
    }

    @Test("many records survive several reopens (seeded)", arguments: [UInt64(0xC0FFEE)])
    func manyRecordsSurviveSeveralReopens(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var expected: [[UInt8]] = []
        for round in 0..<4 {
            let (log, records) = try openLog(path)
            #expect(records == expected, "seed \(seed)")
            for batch in 0..<25 {
                let batchRecords = (0..<(batch % 5 + 1)).map { _ in
                    (0..<Int.random(in: 0...(round * 200), using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }
                }
                try log.append(batchRecords)
                expected += batchRecords
            }
            log.close()
        }
        #expect(try openLog(path).1 == expected, "seed \(seed)")
    }

    @Test("version 1 files and other files are refused with typed errors, untouched")
    func foreignFilesAreRefused() throws {
        try RawFile.write(Array("SSLOG1".utf8) + [1] + [0, 0, 0, 0], to: path)
        #expect(throws: RecordLogError.unsupportedVersion(path: path, version: 1)) { _ = try RecordLog(path: path) }
        try RawFile.write(Array("SSLOG1".utf8) + [1], to: path)  // an empty version 1 log
        #expect(throws: RecordLogError.unsupportedVersion(path: path, version: 1)) { _ = try RecordLog(path: path) }
        #expect(RawFile.read(path) == Array("SSLOG1".utf8) + [1])
        try RawFile.write(Array("SSLOG".utf8) + [1, 0, 0] + RawFile.recordV2([1]), to: path)
        #expect(throws: RecordLogError.unsupportedVersion(path: path, version: 1)) { _ = try RecordLog(path: path) }
        try RawFile.write(Array("hello, world".utf8), to: path)
        #expect(throws: RecordLogError.notARecordLog(path: path)) { _ = try RecordLog(path: path) }
        #expect(RawFile.read(path) == Array("hello, world".utf8))
        // A header torn while the file was created is completed.
        try RawFile.write(Array(RawFile.header(salt: 7)[0..<11]), to: path)
        #expect(try openLog(path).1.isEmpty)
        #expect(RawFile.read(path) == RawFile.header(salt: RawFile.salt(path)))
    }

    // MARK: - Torn tails and corruption

    @Test(
        "truncated at every byte offset: each reopen gives a prefix of the records and reports the cut, never a wrong record"
    )
    func everyTruncation() throws {
        let records: [[UInt8]] = [
            [1], [], Array(repeating: 2, count: 40), [3, 3, 3], Array(repeating: 0xA5, count: 20),
        ]
        try writeLog(records)
        let full = RawFile.read(path)
        // The end of each record, to tell which prefix a length holds.
        var ends: [Int] = []
        var end = 16
        for record in records {
            end += 22 + record.count
            ends.append(end)
        }
        for length in 0...full.count {
            try RawFile.write(Array(full[0..<length]), to: path)
            let (log, recovered) = try openLog(path)
            let complete = ends.filter { $0 <= length }.count
            #expect(recovered == Array(records[0..<complete]), "truncated at \(length)")
            let intact = length < 16 ? 16 : (complete == 0 ? 16 : ends[complete - 1])
            #expect(log.recovery.truncatedBytes == max(0, length - intact), "truncated at \(length)")
            #expect(log.byteCount == UInt64(intact))
            log.close()
            #expect(RawFile.read(path).count == intact)
        }
    }

    @Test("a zero-filled tail (what a power loss can leave) is cut and reported", arguments: [1, 7, 4096])
    func zeroTail(length: Int) throws {
        try writeLog([[1, 2], [3]])
        let intact = RawFile.read(path)
        try RawFile.append([UInt8](repeating: 0, count: length), to: path)
        let (log, records) = try openLog(path)
        #expect(records == [[1, 2], [3]])
        #expect(log.recovery.truncatedBytes == length)
        #expect(log.recovery.truncatedAt == UInt64(intact.count))
        try log.append([9])
        log.close()
        #expect(try openLog(path).1 == [[1, 2], [3], [9]])
    }

    @Test("a garbage tail is cut; appends continue after it")
    func garbageTail() throws {
        try writeLog([[1]])
        // A marker, flags, then a length beyond the limit.
        try RawFile.append([0xA5, 1, 0xFF, 0xFF, 0xFF, 0x7F] + Array(1...20), to: path)
        let (log, records) = try openLog(path)
        #expect(records == [[1]])
        #expect(log.recovery.truncatedBytes == 26)
    }

    @Test("a flipped bit in a middle record is corruption at that record's offset; nothing is cut")
    func flippedBitInTheMiddle() throws {
        try writeLog([[1, 1, 1], [2, 2, 2], [3, 3, 3]])
        var bytes = RawFile.read(path)
        let second = 16 + 25
        bytes[second + 23] ^= 0x10  // in the second record's payload
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: UInt64(second))) { _ = try RecordLog(path: path) }
        #expect(RawFile.read(path) == bytes)
        // In its header instead: the same.
        bytes[second + 23] ^= 0x10
        bytes[second + 2] ^= 0x01
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: UInt64(second))) { _ = try RecordLog(path: path) }
    }

    @Test("a flipped bit in the file header is refused; in the first record, with others after it, is corruption")
    func flippedBitAtTheStart() throws {
        try writeLog([[1], [2]])
        var bytes = RawFile.read(path)
        bytes[1] ^= 0x01
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.notARecordLog(path: path)) { _ = try RecordLog(path: path) }
        bytes[1] ^= 0x01
        bytes[16] ^= 0x01  // the first record's marker
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.corrupted(path: path, offset: 16)) { _ = try RecordLog(path: path) }
    }

    @Test("a flipped bit in the last record: nothing intact follows it, so it is cut as a torn write")
    func flippedBitInTheLastRecord() throws {
        try writeLog([[1, 1], [2, 2]])
        var bytes = RawFile.read(path)
        bytes[bytes.count - 1] ^= 0x80
        try RawFile.write(bytes, to: path)
        let (log, records) = try openLog(path)
        #expect(records == [[1, 1]])
        #expect(log.recovery.truncatedBytes == 24)
    }

    @Test("hostile lengths never trap or allocate what they claim (a 4 GiB length, a max-size length past the end)")
    func hostileLengths() throws {
        try writeLog([[1]])
        for length: UInt32 in [.max, UInt32(RecordLog.maximumRecordSize), UInt32(RecordLog.maximumRecordSize) + 1] {
            var bytes = RawFile.read(path)
            bytes = Array(bytes[0..<(16 + 23)])
            let salt = RawFile.salt(path)
            let lengthBytes = RawFile.littleEndian(length)
            let checksum = RawFile.littleEndian(RawFile.crc32Reference(RawFile.littleEndian64(salt) + lengthBytes))
            bytes +=
                RawFile.recordHeader(length: lengthBytes, checksum: checksum, salt: salt, batch: 39, commit: true)
                + [1, 2, 3]
            try RawFile.write(bytes, to: path)
            let (log, records) = try openLog(path)
            #expect(records == [[1]])
            #expect(log.recovery.truncatedBytes == 25)
            log.close()
        }
    }

    // MARK: - Reading back

    @Test(
        "reads check the record: a wrong location, or damage to a record on disk at open, is a typed error")
    func readsAreChecked() throws {
        let first = try RecordLog(path: path)
        let locations = try first.append([[1, 2, 3], [4, 5]])
        first.close()
        let log = try RecordLog(path: path)
        #expect(try log.read(locations[1]) == [4, 5])
        #expect(throws: RecordLogError.badLocation(path: path, offset: 9)) {
            try log.read(RecordLocation(offset: 9, length: 3))
        }
        #expect(throws: RecordLogError.badLocation(path: path, offset: locations[0].offset)) {
            try log.read(RecordLocation(offset: locations[0].offset, length: 2))
        }
        #expect(throws: RecordLogError.badLocation(path: path, offset: 1000)) {
            try log.read(RecordLocation(offset: 1000, length: 1))
        }
        let reader = try log.makeReader()
        var bytes = RawFile.read(path)
        bytes[bytes.count - 1] ^= 1
        try RawFile.write(bytes, to: path)
        #expect(throws: RecordLogError.badLocation(path: path, offset: locations[1].offset)) {
            try reader.read(locations[1])
        }
        #expect(throws: RecordLogError.badLocation(path: path, offset: locations[1].offset)) {
            try log.read(locations[1])
        }
        reader.close()
        #expect(throws: RecordLogError.closed) { try reader.read(locations[0]) }
    }

    @Test(
        "a record this log appended is read back with its header checked, its payload not checksummed again")
    func appendedRecordsAreNotChecksummedTwice() throws {
        let log = try RecordLog(path: path)
        let location = try log.append([4, 5, 6])
        let reader = try log.makeReader()
        var bytes = RawFile.read(path)
        bytes[bytes.count - 1] ^= 1
        try RawFile.write(bytes, to: path)
        // No second CRC pass over the payload: the flipped bit is not seen (the page cache holds what this
        // process wrote; damage on the disk is found by every read after the next open, and by the scan).
        #expect(try reader.read(location) == [4, 5, 7])
        #expect(try log.read(location) == [4, 5, 7])
        // The header still is checked: a location that is not a record's start, or of another length, is refused.
        #expect(throws: RecordLogError.badLocation(path: path, offset: location.offset + 1)) {
            try reader.read(RecordLocation(offset: location.offset + 1, length: 2))
        }
        #expect(throws: RecordLogError.badLocation(path: path, offset: location.offset)) {
            try log.read(RecordLocation(offset: location.offset, length: 2))
        }
        reader.close()
        log.close()
        // Opened anew, the damaged record (the final batch) is found and cut as a torn write.
        let (reopened, records) = try openLog(path)
        #expect(records.isEmpty)
        #expect(reopened.recovery.truncatedBytes == 22 + 3)
    }

    @Test(
        "a body's given checksum makes the same record as checksumming its bytes, and is what is written")
    func givenBodyChecksumIsUsed() throws {
        let body: [UInt8] = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let log = try RecordLog(path: path)
        let plain = try log.append([RecordPayload(prefix: [9, 8], body: body)])
        let given = try log.append([RecordPayload(prefix: [9, 8], body: body, bodyChecksum: CRC32.checksum(body))])
        let file = RawFile.read(path)
        func record(_ location: RecordLocation) -> ArraySlice<UInt8> {
            // Everything but the batch field (bytes 6 ..< 14 of the header), which differs by design, and the
            // header check (bytes 18 ..< 22), which covers it.
            let start = Int(location.offset)
            return file[start..<(start + 6)] + file[(start + 14)..<(start + 18)]
                + file[(start + 22)..<(start + 22 + Int(location.length))]
        }
        #expect(record(plain[0]) == record(given[0]))
        _ = try log.append([RecordPayload(prefix: [9, 8], body: body, bodyChecksum: CRC32.checksum(body) ^ 1)])
        log.close()
        // The record written with a wrong checksum (the final batch) reads as torn: the given value was used.
        let (reopened, records) = try openLog(path)
        #expect(records == [[9, 8] + body, [9, 8] + body])
        #expect(reopened.recovery.truncatedBytes == 22 + 1_002)
    }

    @Test("a reader reads records from another thread while the log appends", .timeLimit(.minutes(5)))
    func concurrentReads() async throws {
        let log = try RecordLog(path: path)
        let reader = try log.makeReader()
        let written = Locked<[(RecordLocation, [UInt8])]>([])
        // Both on threads of their own (reads and appends with fsync block); the reader sleeps 1 ms when
        // it has caught up instead of spinning a core.
        async let reading: Void = offPool("the reader to check 200 records") {
            var checked = 0
            while checked < 200 {
                let snapshot = written.withLock { $0 }
                if snapshot.count == checked {
                    usleep(1_000)
                    continue
                }
                for (location, payload) in snapshot[checked...] {
                    let bytes = try reader.read(location)
                    #expect(bytes == payload)
                }
                checked = snapshot.count
            }
        }
        let handed = HandedLog(log)
        try await offPool("200 appends") {
            for index in 0..<200 {
                let payload = [UInt8](repeating: UInt8(index), count: index * 7)
                let location = try handed.log.append(payload)
                written.withLock { $0.append((location, payload)) }
            }
        }
        try await reading
    }

    // MARK: - One writer

    @Test("a second open of the file is refused with .locked; the lock goes with close")
    func oneWriter() throws {
        let first = try RecordLog(path: path)
        #expect(throws: RecordLogError.locked(path: path)) { _ = try RecordLog(path: path) }
        first.close()
        let second = try RecordLog(path: path)
        #expect(throws: RecordLogError.closed) { try first.append([1]) }
        try second.append([1])
    }

    @Test("opening a file in a directory that does not exist is a typed error")
    func missingDirectory() {
        let missing = directory.file("none/log")
        #expect(throws: RecordLogError.cannotOpen(path: missing, errno: ENOENT)) { _ = try RecordLog(path: missing) }
    }

    @Test("a record above the maximum size is refused before anything is written")
    func oversizedRecord() throws {
        let log = try RecordLog(path: path)
        let big = [UInt8](repeating: 0, count: RecordLog.maximumRecordSize + 1)
        #expect(throws: RecordLogError.recordTooLarge(big.count, limit: RecordLog.maximumRecordSize)) {
            try log.append([[1], big])
        }
        #expect(log.byteCount == 16)
    }
}

/// A log handed to the one thread that uses it from then on.
private final class HandedLog: @unchecked Sendable {
    // @unchecked Sendable: once handed over, only the receiving thread touches `log`.
    let log: RecordLog
    init(_ log: RecordLog) { self.log = log }
}
