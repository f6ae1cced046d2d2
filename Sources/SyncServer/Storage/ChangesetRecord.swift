import SyncStorage
import SyncWire

/// How a `FilePartitionStore` lays out a stored changeset in a record (little-endian):
/// `u8 1`, `u64 serverVersion`, `u64 clientFileID`, `u64 clientVersion`, `u16 ownerLength`, owner (UTF-8),
/// then the changeset's bytes — or, for an entry with an `origin` or a `duplicateOf` (format 2, since
/// protocol version 7): `u8 2`, the same three `u64`s, `u8 flags` (bit 0: origin, bit 1: duplicateOf),
/// `u64 originClientFileID` and `u64 originClientVersion` when bit 0 is set, `u64 duplicateOf` when bit 1
/// is, then `u16 ownerLength`, owner and the bytes as in format 1. Entries without either keep format 1,
/// so logs written before format 2 read the same and an entry is written as it was before when it can be.
enum ChangesetRecord {
    static let format: UInt8 = 1
    static let formatWithOrigin: UInt8 = 2
    static let fixedSize = 1 + 8 + 8 + 8 + 2

    static func encode(_ changeset: StoredChangeset) -> [UInt8] {
        encodedPayload(changeset).bytes
    }

    /// The record as two parts: everything before the changeset's bytes, then the bytes themselves
    /// (shared with `changeset`, not copied), with their CRC-32 when the upload computed it
    /// (`StoredChangeset.dataChecksum`: the record's checksum is then derived from it, not read again).
    static func encodedPayload(_ changeset: StoredChangeset) -> RecordPayload {
        let owner = Array(changeset.owner.utf8.prefix(Int(UInt16.max)))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fixedSize + 1 + 24 + owner.count)
        func append(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        let extended = changeset.origin != nil || changeset.duplicateOf != nil
        bytes.append(extended ? formatWithOrigin : format)
        for value in [changeset.serverVersion, changeset.clientFileID, changeset.clientVersion] { append(value) }
        if extended {
            bytes.append((changeset.origin == nil ? 0 : 1) | (changeset.duplicateOf == nil ? 0 : 2))
            if let origin = changeset.origin {
                append(origin.clientFileID)
                append(origin.clientVersion)
            }
            if let duplicateOf = changeset.duplicateOf { append(duplicateOf) }
        }
        bytes.append(UInt8(owner.count & 0xFF))
        bytes.append(UInt8(owner.count >> 8))
        bytes += owner
        return RecordPayload(prefix: bytes, body: changeset.data, bodyChecksum: changeset.dataChecksum)
    }

    /// The summary of the record `payload`, without copying its changeset bytes; `nil` if malformed.
    static func decodeSummary(_ payload: UnsafeRawBufferPointer) -> StoredChangesetSummary? {
        guard payload.count >= fixedSize, payload[0] == format || payload[0] == formatWithOrigin else { return nil }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(payload[at + $1]) << UInt64($1 * 8) } }
        var at = 25
        var origin: ChangesetOrigin?
        var duplicateOf: UInt64?
        if payload[0] == formatWithOrigin {
            let flags = payload[at]
            at += 1
            let extra = (flags & 1 == 0 ? 0 : 16) + (flags & 2 == 0 ? 0 : 8)
            guard flags & ~3 == 0, flags != 0, payload.count >= fixedSize + 1 + extra else { return nil }
            if flags & 1 != 0 {
                origin = ChangesetOrigin(clientFileID: u64(at), clientVersion: u64(at + 8))
                at += 16
            }
            if flags & 2 != 0 {
                duplicateOf = u64(at)
                at += 8
            }
        }
        let ownerLength = Int(payload[at]) | Int(payload[at + 1]) << 8
        let ownerStart = at + 2
        guard payload.count >= ownerStart + ownerLength,
            let owner = String(validating: payload[ownerStart..<(ownerStart + ownerLength)], as: UTF8.self)
        else { return nil }
        return StoredChangesetSummary(
            serverVersion: u64(1), clientFileID: u64(9), clientVersion: u64(17),
            byteCount: payload.count - ownerStart - ownerLength, owner: owner, origin: origin,
            duplicateOf: duplicateOf)
    }

    /// The changeset in `payload`; `nil` if malformed. The changeset's bytes are `payload`'s storage with
    /// the fields in front of them removed (moved in place, not copied to a new array).
    static func decode(_ payload: consuming [UInt8]) -> StoredChangeset? {
        guard let summary = payload.withUnsafeBytes({ decodeSummary($0) }) else { return nil }
        payload.removeFirst(payload.count - summary.byteCount)
        return StoredChangeset(
            serverVersion: summary.serverVersion, clientFileID: summary.clientFileID,
            clientVersion: summary.clientVersion, data: payload, owner: summary.owner, origin: summary.origin,
            duplicateOf: summary.duplicateOf)
    }
}
