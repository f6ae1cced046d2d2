import Foundation
import SyncStorage
import SyncWire
import Testing

@testable import SyncServer

/// The server reads an uploaded changeset's bytes for a CRC-32 once: `storeUploads` computes it, the file
/// store derives the record's checksum from it, and the acknowledgement digest is it.
@Suite(.timeLimit(.minutes(5))) struct ChecksumOnceTests {
    @Test("an upload's changesets reach the store with their CRC-32, and the acknowledgement digests are the same")
    func theStoreIsGivenTheChecksumTheDigestIs() async throws {
        let store = ControllableStore()
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let a = try await TestClient.welcomed(to: server)
        _ = try await a.bind(1, clientFileID: 10)
        let uploaded = [bytes(1), bytes(2, count: 10_000), bytes(3, count: 0), bytes(4, count: 65)]
        a.upload(1, from: 1, uploaded)
        let download = try await a.nextDownload()
        #expect(download.acknowledgedDigests == uploaded.map { CRC32.checksum($0) })
        let given = await store.appendCalls.flatMap { $0 }
        #expect(given.map(\.data) == uploaded)
        #expect(given.map(\.dataChecksum) == uploaded.map { CRC32.checksum($0) })
    }

    @Test("the partition's recent cache keeps the checksum computed at upload, for the acknowledgement digest")
    func theRecentCacheKeepsTheChecksum() {
        let partition = Partition(name: "p")
        var entry = StoredChangeset(serverVersion: 1, clientFileID: 1, clientVersion: 1, data: bytes(7))
        entry.dataChecksum = 0x1234_5678  // whatever was computed at upload is what the digest will be
        partition.append([entry])
        #expect(partition.cachedChecksum(of: 1) == 0x1234_5678)
        #expect(partition.cachedData(of: 1) == bytes(7))
        let unknown = StoredChangeset(serverVersion: 2, clientFileID: 1, clientVersion: 2, data: bytes(8))
        partition.append([unknown])
        #expect(partition.cachedChecksum(of: 2) == nil)
    }

    @Test("the file store derives a changeset's record checksum from the CRC-32 it is given, not from the bytes")
    func theFileStoreUsesTheGivenChecksum() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ChecksumOnceTests-\(UUID())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var right = StoredChangeset(serverVersion: 1, clientFileID: 7, clientVersion: 1, data: bytes(5, count: 1_000))
        right.dataChecksum = CRC32.checksum(right.data)
        // A wrong checksum shows whether it was used: the record it gives reads back as damaged.
        var wrong = StoredChangeset(serverVersion: 2, clientFileID: 7, clientVersion: 2, data: bytes(6, count: 1_000))
        wrong.dataChecksum = CRC32.checksum(wrong.data) ^ 1
        do {
            let store = try FilePartitionStore(directory: directory)
            try await store.append([right], to: "p")
            try await store.append([wrong], to: "p")
            await store.close()
        }
        let store = try FilePartitionStore(directory: directory)
        let summaries = try? await store.summaries(of: "p")
        #expect(summaries == nil || summaries == [right.summary], "\(String(describing: summaries))")
        await store.close()
    }
}
