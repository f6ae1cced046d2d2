import Foundation
import SyncStorage
import Testing

@Suite struct RecordLogTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("log") }

    static let header: [UInt8] = Array("SSLOG1".utf8) + [1]

    // MARK: - Creating and reopening

    @Test func newLogHasOnlyTheHeader() throws {
        let log = try RecordLog(path: path)
        #expect(log.recoveredRecords.isEmpty)
        #expect(log.truncatedBytes == 0)
        #expect(log.byteCount == 7)
        #expect(log.path == path)
        #expect(RawFile.read(path) == Self.header)
    }

    @Test func appendedRecordsAreRecoveredAfterReopening() throws {
        let records: [[UInt8]] = [[1, 2, 3], Array("héllo".utf8), [0xFF]]
        do {
            let log = try RecordLog(path: path)
            try log.append(records[0])
            try log.append(Array(records[1...]))
            #expect(log.byteCount == 7 + (8 + 3) + (8 + 6) + (8 + 1))
            #expect(RawFile.read(path).count == log.byteCount)
        }
        let reopened = try RecordLog(path: path)
        #expect(reopened.recoveredRecords == records)
        #expect(reopened.truncatedBytes == 0)
        #expect(reopened.byteCount == 7 + (8 + 3) + (8 + 6) + (8 + 1))
        #expect(RawFile.read(path) == Self.header + records.flatMap { RawFile.record($0) })
    }

    @Test func emptyRecordsAreKeptAndEmptyBatchesDoNothing() throws {
        do {
            let log = try RecordLog(path: path)
            try log.append([UInt8]())
            try log.append([[UInt8]]())
            try log.append([[], [7], []])
            #expect(log.byteCount == 7 + 8 + 8 + 9 + 8)
        }
        #expect(try RecordLog(path: path).recoveredRecords == [[], [], [7], []])
    }

    @Test func manyRecordsSurviveSeveralReopens() throws {
        var rng = SystemRandomNumberGenerator()
        var expected: [[UInt8]] = []
        for round in 0..<4 {
            let log = try RecordLog(path: path)
            #expect(log.recoveredRecords == expected)
            #expect(log.truncatedBytes == 0)
            for batch in 0..<25 {
                let records = (0..<(batch % 5 + 1)).map { _ in
                    (0..<Int.random(in: 0...(round * 200), using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    }
                }
                if records.count == 1 { try log.append(records[0]) } else { try log.append(records) }
                expected += records
            }
            log.close()
        }
        #expect(try RecordLog(path: path).recoveredRecords == expected)
    }

    // MARK: - Recovery

    @Test func tornRecordHeaderIsCutAndAppendsContinue() throws {
        try writeLog([[1], [2, 2], [3, 3, 3]])
        let intactLength = RawFile.read(path).count
        try RawFile.append([5, 0, 0, 0, 0xAA], to: path)  // a record header cut after 5 of 8 bytes

        do {
            let log = try RecordLog(path: path)
            #expect(log.recoveredRecords == [[1], [2, 2], [3, 3, 3]])
            #expect(log.truncatedBytes == 5)
            #expect(log.byteCount == intactLength)
            #expect(RawFile.read(path).count == intactLength)
            try log.append([4, 4, 4, 4])
        }
        let reopened = try RecordLog(path: path)
        #expect(reopened.recoveredRecords == [[1], [2, 2], [3, 3, 3], [4, 4, 4, 4]])
        #expect(reopened.truncatedBytes == 0)
    }

    @Test func tornPayloadIsCutAndAppendsContinue() throws {
        try writeLog([[1], [2, 2]])
        let intactLength = RawFile.read(path).count
        let torn = Array(RawFile.record(Array(repeating: 9, count: 100)).prefix(8 + 10))
        try RawFile.append(torn, to: path)

        do {
            let log = try RecordLog(path: path)
            #expect(log.recoveredRecords == [[1], [2, 2]])
            #expect(log.truncatedBytes == 18)
            #expect(RawFile.read(path).count == intactLength)
            try log.append([5])
        }
        #expect(try RecordLog(path: path).recoveredRecords == [[1], [2, 2], [5]])
    }

    @Test func corruptChecksumInTheMiddleCutsFromThere() throws {
        let records: [[UInt8]] = [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]]
        try writeLog(records)
        var bytes = RawFile.read(path)
        let thirdPayload = 7 + 2 * 10 + 8
        bytes[thirdPayload] ^= 0x01
        try RawFile.write(bytes, to: path)

        do {
            let log = try RecordLog(path: path)
            #expect(log.recoveredRecords == [[1, 1], [2, 2]])
            #expect(log.truncatedBytes == 3 * 10)
            #expect(log.byteCount == 7 + 2 * 10)
            try log.append([6])
        }
        #expect(try RecordLog(path: path).recoveredRecords == [[1, 1], [2, 2], [6]])
    }

    @Test func lengthBeyondTheLimitIsTreatedAsCorrupt() throws {
        try writeLog([[1]])
        // Claims 0xFFFFFFFF bytes: more than both the limit and the file.
        try RawFile.append([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0] + Array(repeating: 0, count: 16), to: path)
        let log = try RecordLog(path: path)
        #expect(log.recoveredRecords == [[1]])
        #expect(log.truncatedBytes == 24)
    }

    @Test func tornHeaderOfANewFileIsCompleted() throws {
        try RawFile.write(Array("SSL".utf8), to: path)
        let log = try RecordLog(path: path)
        #expect(log.recoveredRecords.isEmpty)
        #expect(log.byteCount == 7)
        #expect(RawFile.read(path) == Self.header)
    }

    @Test(arguments: [
        Array("NOTALOG and more".utf8),
        Array("SSLOG1".utf8) + [2],  // a version this build does not read
        Array("SSLOG2".utf8) + [1] + RawFile.record([1]),
        Array("XX".utf8),  // shorter than the header and not a prefix of it
    ])
    func wrongHeaderIsRejected(contents: [UInt8]) throws {
        try RawFile.write(contents, to: path)
        #expect(throws: RecordLogError.notARecordLog(path: path)) { try RecordLog(path: path) }
        #expect(RawFile.read(path) == contents, "a file that is not a record log is left alone")
    }

    // MARK: - Errors

    @Test func recordTooLargeWritesNothing() throws {
        let log = try RecordLog(path: path)
        try log.append([1])
        let tooLarge = [UInt8](repeating: 0, count: RecordLog.maximumRecordSize + 1)
        #expect(throws: RecordLogError.recordTooLarge(RecordLog.maximumRecordSize + 1, limit: 64 * 1024 * 1024)) {
            try log.append([[2], tooLarge])
        }
        #expect(log.byteCount == 7 + 9)
        #expect(RawFile.read(path).count == 7 + 9)
    }

    @Test func appendAfterCloseThrowsClosed() throws {
        let log = try RecordLog(path: path)
        log.close()
        log.close()
        #expect(throws: RecordLogError.closed) { try log.append([1]) }
        #expect(throws: RecordLogError.closed) { try log.append([[1], [2]]) }
    }

    @Test func missingParentDirectoryCannotOpen() {
        let missing = directory.file("no-such-directory/log")
        #expect(throws: RecordLogError.cannotOpen(path: missing, errno: ENOENT)) { try RecordLog(path: missing) }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func writeFailureIsReported() {
        // /dev/full opens fine and fails every write with ENOSPC.
        #expect(throws: RecordLogError.writeFailed(path: "/dev/full", errno: ENOSPC)) {
            try RecordLog(path: "/dev/full")
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(RecordLogError.cannotOpen(path: "/x", errno: ENOENT).description.contains("/x"))
        #expect(RecordLogError.cannotOpen(path: "/x", errno: ENOENT).description.contains("errno \(ENOENT)"))
        #expect(RecordLogError.notARecordLog(path: "/y").description.contains("not a record log"))
        #expect(RecordLogError.recordTooLarge(10, limit: 5).description.contains("limit of 5"))
        #expect(RecordLogError.closed.description == "the record log is closed")
    }

    // MARK: - Helpers

    private func writeLog(_ records: [[UInt8]]) throws {
        let log = try RecordLog(path: path)
        try log.append(records)
        log.close()
    }
}
