import Testing

@testable import SyncServer

@Suite("Partition")
struct PartitionTests {
    func summary(_ version: UInt64, file: UInt64, bytes: Int) -> StoredChangesetSummary {
        StoredChangesetSummary(
            serverVersion: version, clientFileID: file, clientVersion: version, byteCount: bytes, owner: "")
    }

    @Test("remaining bytes leave out the client's own entries, even when it wrote more before than others after")
    func remainingBytesAfterALargeOwnUpload() throws {
        let partition = Partition(name: "p")
        try partition.restore(from: [
            summary(1, file: 1, bytes: 100_000), summary(2, file: 2, bytes: 4), summary(3, file: 1, bytes: 7),
            summary(4, file: 2, bytes: 5),
        ])
        #expect(partition.remainingBytes(after: 1, for: 1) == 9)
        #expect(partition.remainingBytes(after: 2, for: 1) == 5)
        #expect(partition.remainingBytes(after: 0, for: 2) == 100_007)
        #expect(partition.remainingBytes(after: 4, for: 1) == 0)
    }

    @Test("extending with entries that do not follow the log is refused and changes nothing")
    func extendChecksVersions() throws {
        let partition = Partition(name: "p")
        try partition.restore(from: [summary(1, file: 1, bytes: 1)])
        #expect(throws: PartitionLogError(partition: "p", expectedServerVersion: 3, foundServerVersion: 4)) {
            try partition.extend(with: [summary(2, file: 2, bytes: 1), summary(4, file: 2, bytes: 1)])
        }
        #expect(partition.latestVersion == 1)
        try partition.extend(with: [summary(2, file: 2, bytes: 1), summary(3, file: 2, bytes: 2)])
        #expect(partition.latestVersion == 3)
        #expect(partition.lastClientVersion[2] == 3)
    }
}
