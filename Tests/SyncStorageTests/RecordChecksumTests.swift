import Foundation
import SyncStreams
import Testing

@testable import SyncStorage

/// Opening a log gives each record's checked checksum, from which the CRC-32 of the part of its payload
/// after a prefix follows without reading that part again (a local store's changesets, issue 21).
@Suite("Record checksums at open", .timeLimit(.minutes(5)))
struct RecordChecksumTests {
    let directory = TemporaryDirectory()

    @Test(
        "the body checksum found from a visited record's checksum is the CRC-32 of its bytes after the prefix, for records alone and in batches, of any size"
    )
    func bodyChecksums() throws {
        let path = directory.file("log")
        var state: UInt64 = 0x5EED_4019  // fixed seed (xorshift)
        func next() -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        let sizes = [0, 1, 7, 8, 9, 13, 100, 4_096, 70_000, RecordLog.directWriteThreshold + 3]
        let payloads = sizes.map { size in (0..<(13 + size)).map { _ in next() } }
        do {
            let log = try RecordLog(path: path)
            _ = try log.append(Array(payloads.prefix(4)))  // one batch
            for payload in payloads.dropFirst(4) { _ = try log.append(payload) }  // alone
            log.close()
        }
        var found: [UInt32] = []
        let log = try RecordLog(path: path, fileSystem: SystemFileSystem()) { _, payload, checksum in
            found.append(checksum.body(of: payload, afterPrefix: 13))
        }
        log.close()
        #expect(found == payloads.map { CRC32.checksum(Array($0.dropFirst(13))) })
    }
}
