import SyncStorage
import SyncStreams

/// One partition's open record log in a `FilePartitionStore`, with its index.
///
/// The log is used only on `queue` (serial: appends in order); the index is locked, so reads find the
/// locations of appended versions from any thread.
///
/// A failed fsync poisons the log (see `RecordLog`); the next append reopens the file first, which reads
/// back what is durable: exactly the indexed records (a record of the failed append that survived is cut
/// again), or the append fails again and the next one tries again — a transient disk error does not
/// leave the partition failing until the server restarts.
final class PartitionFile: @unchecked Sendable {
    // @unchecked Sendable: `log` is touched only on `queue`; `index` is locked; the rest is immutable.

    let partition: String
    let reader: RecordReader
    /// What opening found and did (a torn final record cut off).
    let recovery: RecordLog.Recovery
    /// Replaced when a poisoned log is reopened; used only on `queue`.
    private var log: RecordLog
    private let fileSystem: any FileSystem
    private let queue: BlockingQueue
    private let index: Locked<(summaries: [StoredChangesetSummary], locations: [RecordLocation])>

    private init(
        partition: String, log: RecordLog, fileSystem: any FileSystem, reader: RecordReader, queue: BlockingQueue,
        summaries: [StoredChangesetSummary], locations: [RecordLocation]
    ) {
        self.partition = partition
        self.log = log
        self.fileSystem = fileSystem
        recovery = log.recovery
        self.reader = reader
        self.queue = queue
        index = Locked((summaries, locations))
    }

    /// Opens (or creates) the log at `path` and indexes its records.
    static func open(
        path: String, partition: String, fileSystem: any FileSystem = SystemFileSystem()
    ) async throws(FilePartitionStoreError) -> PartitionFile {
        let queue = BlockingQueue(label: "SyncServer.file-store.\(partition.prefix(32))")
        return try await queue.run { () throws(FilePartitionStoreError) -> PartitionFile in
            var summaries: [StoredChangesetSummary] = []
            var locations: [RecordLocation] = []
            var malformed: UInt64?
            let log: RecordLog
            do throws(RecordLogError) {
                log = try RecordLog(path: path, fileSystem: fileSystem) { location, payload in
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
                partition: partition, log: log, fileSystem: fileSystem, reader: reader, queue: queue,
                summaries: summaries, locations: locations)
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
            if log.refusesAppends { try reopen() }
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

    /// Replaces the poisoned log by the file opened afresh, holding exactly the indexed records: any
    /// record after them (of the append whose fsync failed) is cut, durably. Runs on `queue`. Throws when
    /// the file cannot be opened or cut, or holds fewer records than indexed (acknowledged changesets gone:
    /// the partition keeps failing rather than pretend).
    private func reopen() throws(FilePartitionStoreError) {
        let indexed = index.withLock { $0.locations }
        let path = log.path
        log.close()
        var found: [RecordLocation] = []
        let fresh: RecordLog
        do throws(RecordLogError) {
            fresh = try RecordLog(path: path, fileSystem: fileSystem) { location, _ in found.append(location) }
        } catch {
            throw .storage(partition: partition, error)
        }
        guard found.count >= indexed.count, Array(found.prefix(indexed.count)) == indexed else {
            fresh.close()
            throw .storage(partition: partition, .corrupted(path: path, offset: indexed.last?.end ?? 0))
        }
        if found.count > indexed.count {
            do throws(RecordLogError) {
                try fresh.cut(to: indexed.last?.end ?? UInt64(RecordFormat.fileHeaderSize))
            } catch {
                fresh.close()
                throw .storage(partition: partition, error)
            }
        }
        log = fresh
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
