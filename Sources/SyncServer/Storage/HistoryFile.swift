import SyncStorage

/// A partition's identity in a `FilePartitionStore` (`<partition>.history` beside `<partition>.log`): a
/// `RecordLog` whose one record is `u8 1` (format) and the `u64` history id (little-endian), a random
/// non-zero number chosen when the file is first read and found without one.
///
/// Created and fsynced before the server sends the id to any client, so a client never holds an id the
/// store could lose in a crash; a torn record (a crash while creating it) is cut by `RecordLog` and a new
/// id chosen, which no client can hold yet. Emptying the store's directory, or replacing it by another
/// store's, changes the id: clients holding the old one get `clientResetRequired` (`historyLost`).
enum HistoryFile {
    /// Reads the id at `path`, creating the file with a new random id when it has none.
    static func historyID(at path: String, partition: String) throws(FilePartitionStoreError) -> UInt64 {
        var found: UInt64?
        var malformed: UInt64?
        let log: RecordLog
        do throws(RecordLogError) {
            log = try RecordLog(path: path) { location, payload in
                guard found == nil, malformed == nil else { return }
                guard let id = decode(Array(payload)) else {
                    malformed = location.offset
                    return
                }
                found = id
            }
        } catch {
            throw .storage(partition: partition, error)
        }
        defer { log.close() }
        if let malformed { throw .malformedRecord(partition: partition, offset: malformed) }
        if let found { return found }
        let id = UInt64.random(in: 1...UInt64.max)
        do throws(RecordLogError) { _ = try log.append([encode(id)]) } catch {
            throw .storage(partition: partition, error)
        }
        return id
    }

    static func encode(_ id: UInt64) -> [UInt8] {
        [1] + (0..<8).map { UInt8(truncatingIfNeeded: id >> (8 * $0)) }
    }

    static func decode(_ payload: [UInt8]) -> UInt64? {
        guard payload.count == 9, payload[0] == 1 else { return nil }
        let id = (0..<8).reduce(UInt64(0)) { $0 | UInt64(payload[1 + $1]) << (8 * $1) }
        return id == 0 ? nil : id
    }
}
