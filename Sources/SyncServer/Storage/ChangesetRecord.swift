import SyncStorage

/// How a `FilePartitionStore` lays out a stored changeset in a record (little-endian):
/// `u8 1`, `u64 serverVersion`, `u64 clientFileID`, `u64 clientVersion`, `u16 ownerLength`, owner (UTF-8),
/// then the changeset's bytes.
enum ChangesetRecord {
    static let format: UInt8 = 1
    static let fixedSize = 1 + 8 + 8 + 8 + 2

    static func encode(_ changeset: StoredChangeset) -> [UInt8] {
        encodedPayload(changeset).bytes
    }

    /// The record as two parts: everything before the changeset's bytes, then the bytes themselves
    /// (shared with `changeset`, not copied).
    static func encodedPayload(_ changeset: StoredChangeset) -> RecordPayload {
        let owner = Array(changeset.owner.utf8.prefix(Int(UInt16.max)))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fixedSize + owner.count)
        bytes.append(format)
        for value in [changeset.serverVersion, changeset.clientFileID, changeset.clientVersion] {
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        bytes.append(UInt8(owner.count & 0xFF))
        bytes.append(UInt8(owner.count >> 8))
        bytes += owner
        return RecordPayload(prefix: bytes, body: changeset.data)
    }

    /// The summary of the record `payload`, without copying its changeset bytes; `nil` if malformed.
    static func decodeSummary(_ payload: UnsafeRawBufferPointer) -> StoredChangesetSummary? {
        guard payload.count >= fixedSize, payload[0] == format else { return nil }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(payload[at + $1]) << UInt64($1 * 8) } }
        let ownerLength = Int(payload[25]) | Int(payload[26]) << 8
        guard payload.count >= fixedSize + ownerLength,
            let owner = String(validating: payload[fixedSize..<(fixedSize + ownerLength)], as: UTF8.self)
        else { return nil }
        return StoredChangesetSummary(
            serverVersion: u64(1), clientFileID: u64(9), clientVersion: u64(17),
            byteCount: payload.count - fixedSize - ownerLength, owner: owner)
    }

    /// The changeset in `payload`; `nil` if malformed. The changeset's bytes are `payload`'s storage with
    /// the fields in front of them removed (moved in place, not copied to a new array).
    static func decode(_ payload: consuming [UInt8]) -> StoredChangeset? {
        guard let summary = payload.withUnsafeBytes({ decodeSummary($0) }) else { return nil }
        payload.removeFirst(payload.count - summary.byteCount)
        return StoredChangeset(
            serverVersion: summary.serverVersion, clientFileID: summary.clientFileID,
            clientVersion: summary.clientVersion, data: payload, owner: summary.owner)
    }
}
