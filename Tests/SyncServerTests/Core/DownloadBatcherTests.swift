import SyncWire
import Testing

@testable import SyncServer

@Suite("DownloadBatcher")
struct DownloadBatcherTests {
    private func entry(_ version: UInt64, file: UInt64, bytes count: Int) -> StoredChangeset {
        StoredChangeset(
            serverVersion: version, clientFileID: file, clientVersion: version,
            data: bytes(UInt8(version), count: count))
    }

    @Test func emptyRunGivesOneEmptyDownload() {
        let downloads = DownloadBatcher.downloads(of: [], to: 3, clientFileID: 1, maximumBytes: 10)
        #expect(downloads == [Download(sessionID: 3, entries: [], remainingBytes: 0)])
    }

    @Test func acknowledgementsCarryNoBytesAndJoinTheCurrentMessage() {
        let run = [
            entry(1, file: 1, bytes: 100), entry(2, file: 2, bytes: 6), entry(3, file: 1, bytes: 100),
            entry(4, file: 2, bytes: 6), entry(5, file: 1, bytes: 100),
        ]
        let downloads = DownloadBatcher.downloads(of: run, to: 1, clientFileID: 1, maximumBytes: 10)
        #expect(downloads.map(\.entries.count) == [3, 2])
        #expect(downloads.map(\.remainingBytes) == [6, 0])
        #expect(downloads[0].entries.first == .acknowledged(serverVersion: 1, clientVersion: 1))
    }

    @Test func onlyAcknowledgementsGiveOneMessage() {
        let run = (1...5).map { entry($0, file: 1, bytes: 1000) }
        let downloads = DownloadBatcher.downloads(of: run, to: 1, clientFileID: 1, maximumBytes: 10)
        #expect(downloads.count == 1)
        #expect(downloads[0].remainingBytes == 0)
    }

    @Test func chunksFillUpToTheLimitExactly() {
        let run = (1...6).map { entry($0, file: 2, bytes: 5) }
        let downloads = DownloadBatcher.downloads(of: run, to: 1, clientFileID: 1, maximumBytes: 10)
        #expect(downloads.map(\.entries.count) == [2, 2, 2])
        #expect(downloads.map(\.remainingBytes) == [20, 10, 0])
    }

    @Test func emptyChangesetsFitUnderAZeroLimit() {
        let run = (1...3).map { entry($0, file: 2, bytes: 0) } + [entry(4, file: 2, bytes: 2)]
        let downloads = DownloadBatcher.downloads(of: run, to: 1, clientFileID: 1, maximumBytes: 0)
        #expect(downloads.map(\.entries.count) == [3, 1])
        #expect(downloads.map(\.remainingBytes) == [2, 0])
    }
}
