import SyncWire
import Testing

@testable import SyncServer

@Suite("DownloadBatcher")
struct DownloadBatcherTests {
    /// A log of `entries` (file, bytes) with versions 1, 2, 3, …
    private struct Log {
        let entries: [StoredChangesetSummary]
        init(_ entries: [(file: UInt64, bytes: Int)]) {
            self.entries = entries.enumerated().map { index, entry in
                StoredChangesetSummary(
                    serverVersion: UInt64(index + 1), clientFileID: entry.file, clientVersion: UInt64(index + 1),
                    byteCount: entry.bytes, owner: "")
            }
        }

        /// The runs the batcher cuts the whole log into for `clientFileID`.
        func runs(for clientFileID: UInt64, maximumBytes: Int, maximumMessageSize: Int = .max) -> [ClosedRange<UInt64>]
        {
            var runs: [ClosedRange<UInt64>] = []
            var next: UInt64 = 1
            while let run = DownloadBatcher.nextRun(
                from: next, through: UInt64(entries.count), clientFileID: clientFileID, maximumBytes: maximumBytes,
                maximumMessageSize: maximumMessageSize, entry: { entries[Int($0 - 1)] })
            {
                runs.append(run)
                next = run.upperBound + 1
            }
            return runs
        }
    }

    @Test("nothing to send gives no run")
    func nothingToSend() {
        #expect(Log([]).runs(for: 1, maximumBytes: 10).isEmpty)
    }

    @Test("acknowledgements carry no bytes and join the message being filled")
    func acknowledgementsJoinTheCurrentMessage() {
        let log = Log([(1, 100), (2, 6), (1, 100), (2, 6), (1, 100)])
        #expect(log.runs(for: 1, maximumBytes: 10) == [1...3, 4...5])
    }

    @Test("an acknowledgement-only backlog is split below the message limit")
    func acknowledgementsOnlyAreSplitByMessageSize() {
        let log = Log((1...10).map { _ in (1, 1000) })
        // Room for the message's framing and three acknowledgements of 17 bytes each.
        let limit = DownloadBatcher.messageOverhead + 3 * DownloadBatcher.acknowledgementSize
        #expect(log.runs(for: 1, maximumBytes: 10, maximumMessageSize: limit) == [1...3, 4...6, 7...9, 10...10])
        #expect(log.runs(for: 1, maximumBytes: 10).count == 1)
    }

    @Test("changesets fill a message up to the byte limit exactly")
    func chunksFillUpToTheLimitExactly() {
        let log = Log((1...6).map { _ in (2, 5) })
        #expect(log.runs(for: 1, maximumBytes: 10) == [1...2, 3...4, 5...6])
    }

    @Test("one changeset always fits, even above the byte limit")
    func oneChangesetAlwaysFits() {
        let log = Log([(2, 50), (2, 50)])
        #expect(log.runs(for: 1, maximumBytes: 10) == [1...1, 2...2])
    }

    @Test("no message exceeds the message size, whatever the byte limit")
    func messageSizeBoundsChangesets() {
        let log = Log((1...4).map { _ in (2, 100) })
        let limit = DownloadBatcher.messageOverhead + 2 * (DownloadBatcher.changesetOverhead + 100)
        #expect(log.runs(for: 1, maximumBytes: .max, maximumMessageSize: limit) == [1...2, 3...4])
    }

    @Test("empty changesets fit under a zero byte limit")
    func emptyChangesetsFitUnderAZeroLimit() {
        let log = Log([(2, 0), (2, 0), (2, 0), (2, 2)])
        #expect(log.runs(for: 1, maximumBytes: 0) == [1...3, 4...4])
    }
}
