import SyncStorage
import SyncStreams

/// One partition's open record log in a `FilePartitionStore`, with its index.
///
/// The log is used only on `queue` (serial: appends in order); the index is locked, so reads find the
/// locations of appended versions from any thread.
final class PartitionFile: @unchecked Sendable {
    // @unchecked Sendable: `log` is touched only on `queue`; `index` is locked; the rest is immutable.

    let partition: String
    let reader: RecordReader
    /// What opening found and did (a torn final record cut off).
    let recovery: RecordLog.Recovery
    private let log: RecordLog
    private let queue: BlockingQueue
    private let index: Locked<(summaries: [StoredChangesetSummary], locations: [RecordLocation])>

    private init(
        partition: String, log: RecordLog, reader: RecordReader, queue: BlockingQueue,
        summaries: [StoredChangesetSummary], locations: [RecordLocation]
    ) {
        self.partition = partition
        self.log = log
        recovery = log.recovery
        self.reader = reader
        self.queue = queue
        index = Locked((summaries, locations))
    }

    /// Opens (or creates) the log at `path` and indexes its records.
    static func open(path: String, partition: String) async throws(FilePartitionStoreError) -> PartitionFile {
        let queue = BlockingQueue(label: "SyncServer.file-store.\(partition.prefix(32))")
        return try await queue.run { () throws(FilePartitionStoreError) -> PartitionFile in
            var summaries: [StoredChangesetSummary] = []
            var locations: [RecordLocation] = []
            var malformed: UInt64?
            let log: RecordLog
            do throws(RecordLogError) {
                log = try RecordLog(path: path) { location, payload in
                    guard malformed == nil else { return }
                    guard let summary = ChangesetRecord.decodeSummary(payload) else {
                        malformed = location.offset
                        return
                    }
                    summaries.append(summary)
                    locations.append(location)
                }
            } catch {
                throw .storage(partition: partition, error)
            }
            if let malformed {
                log.close()
                throw .malformedRecord(partition: partition, offset: malformed)
            }
            let reader: RecordReader
            do throws(RecordLogError) { reader = try log.makeReader() } catch {
                log.close()
                throw .storage(partition: partition, error)
            }
            return PartitionFile(
                partition: partition, log: log, reader: reader, queue: queue, summaries: summaries, locations: locations
            )
        }
    }

    var summaries: [StoredChangesetSummary] { index.withLock { $0.summaries } }

    /// The locations of `versions` (server versions are 1-based and consecutive in the file).
    func locations(of versions: ClosedRange<UInt64>) -> [RecordLocation] {
        index.withLock { index in
            let lower = Int(clamping: max(versions.lowerBound, 1)) - 1
            let upper = min(Int(clamping: versions.upperBound), index.locations.count)
            guard lower < upper else { return [] }
            return Array(index.locations[lower..<upper])
        }
    }

    /// Appends `changesets` durably, then indexes them.
    func append(_ changesets: [StoredChangeset]) async throws(FilePartitionStoreError) {
        let records = changesets.map(ChangesetRecord.encodedPayload)
        let summaries = changesets.map(\.summary)
        try await queue.run { [self] () throws(FilePartitionStoreError) in
            let locations: [RecordLocation]
            do throws(RecordLogError) { locations = try log.append(records) } catch {
                throw .storage(partition: partition, error)
            }
            index.withLock { index in
                index.summaries += summaries
                index.locations += locations
            }
        }
    }

    /// Closes the log once the appends queued before are done.
    func close() async {
        reader.close()
        await queue.run { [self] in log.close() }
    }

    /// Closes the log once the appends queued before are done, without waiting.
    func closeDetached() {
        reader.close()
        queue.runDetached { [self] in log.close() }
    }
}
