import SyncStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One partition's side file of `ClientFileRecord`s in a `FilePartitionStore` (`<partition>.clients`
/// beside `<partition>.log`): a `RecordLog` of one record per payload (see `ClientFileRecord.encoded()`).
///
/// It grows by one record per client file each time the server refreshes that file's last-seen time, so
/// opening compacts it when most of its records are superseded: the latest record of each client file is
/// written to `<partition>.clients.compacting`, fsynced, and renamed over the file (a crash leaves the old
/// file or the new one, and a leftover `.compacting` file is overwritten next time).
final class ClientFileLog: @unchecked Sendable {
    // @unchecked Sendable: `log` is touched only on `queue`; the rest is immutable.

    private let log: RecordLog
    private let queue: BlockingQueue
    let partition: String

    private init(log: RecordLog, queue: BlockingQueue, partition: String) {
        self.log = log
        self.queue = queue
        self.partition = partition
    }

    /// Opens (or creates) the side file at `path`, compacting it when superseded records outnumber the live
    /// ones by far; returns it with the live records (the latest per client file, in the order written).
    static func open(
        path: String, partition: String
    ) async throws(FilePartitionStoreError) -> (log: ClientFileLog, records: [ClientFileRecord]) {
        let queue = BlockingQueue(label: "SyncServer.file-store.clients.\(partition.prefix(32))")
        return try await queue.run { () throws(FilePartitionStoreError) -> (ClientFileLog, [ClientFileRecord]) in
            var all: [ClientFileRecord] = []
            var malformed: UInt64?
            var log: RecordLog
            do throws(RecordLogError) {
                log = try RecordLog(path: path) { location, payload in
                    guard malformed == nil else { return }
                    guard let record = ClientFileRecord(decoding: payload) else {
                        malformed = location.offset
                        return
                    }
                    all.append(record)
                }
            } catch {
                throw .storage(partition: partition, error)
            }
            if let malformed {
                log.close()
                throw .malformedRecord(partition: partition, offset: malformed)
            }
            let live = latest(of: all)
            if all.count > 2 * live.count + 64 {
                log.close()
                log = try compact(live, at: path, partition: partition)
            }
            return (ClientFileLog(log: log, queue: queue, partition: partition), live)
        }
    }

    /// The latest record of each client file, in the order of those records.
    static func latest(of records: [ClientFileRecord]) -> [ClientFileRecord] {
        var last: [UInt64: Int] = [:]
        for (index, record) in records.enumerated() { last[record.clientFileID] = index }
        return records.enumerated().filter { last[$0.element.clientFileID] == $0.offset }.map(\.element)
    }

    /// Writes `live` to a new file, renames it over `path`, and returns the new file opened.
    private static func compact(
        _ live: [ClientFileRecord], at path: String, partition: String
    ) throws(FilePartitionStoreError) -> RecordLog {
        let temporary = path + ".compacting"
        _ = unlink(temporary)
        do throws(RecordLogError) {
            let fresh = try RecordLog(path: temporary)
            try fresh.append(live.map { $0.encoded() })
            fresh.close()
        } catch {
            throw .storage(partition: partition, error)
        }
        if let code = DurableRename.rename(temporary, over: path) {
            throw .cannotOpen(path: path, errno: code)
        }
        do throws(RecordLogError) {
            return try RecordLog(path: path)
        } catch {
            throw .storage(partition: partition, error)
        }
    }

    /// Appends `records` durably (one fsync).
    func append(_ records: [ClientFileRecord]) async throws(FilePartitionStoreError) {
        let payloads = records.map { $0.encoded() }
        try await queue.run { [self] () throws(FilePartitionStoreError) in
            do throws(RecordLogError) { _ = try log.append(payloads) } catch {
                throw .storage(partition: partition, error)
            }
        }
    }

    /// Closes the file once the appends queued before are done.
    func close() async {
        await queue.run { [self] in log.close() }
    }

    /// Closes the file once the appends queued before are done, without waiting.
    func closeDetached() {
        queue.runDetached { [self] in log.close() }
    }
}
