import SyncWire

/// One entry of a partition's log: a client's changeset as the server integrated it.
///
/// A partition's log holds entries with server versions 1, 2, 3, … without gaps, in that order. For each
/// `clientFileID`, client versions follow each other (1, 2, 3, …) along the log, and every entry of one
/// client file has the same `owner`.
///
/// Each changeset has an *origin*: where it was first written (`UploadChangeset.origin`; its own client file
/// and version when `origin` is `nil`). The log integrates each origin once: an upload of an origin an
/// earlier entry holds with the same bytes (a client store restored from a backup taken before a recovering
/// client reset, reset and recovering the same changeset again) is appended as a *duplicate* entry
/// (`duplicateOf`): it keeps the uploader's client versions following each other and acknowledges the
/// upload, but other clients receive it as an empty changeset.
public struct StoredChangeset: Sendable, Hashable {
    /// The entry's position in the partition's log, starting at 1.
    public var serverVersion: UInt64
    /// The client file (a client's local copy of the partition) that uploaded it.
    public var clientFileID: UInt64
    /// The uploading client's sequence number for it.
    public var clientVersion: UInt64
    /// The opaque changeset bytes.
    public var data: [UInt8]
    /// Who uploaded it: the identity of the credential (`"anonymous"`, or `"key:"` and a hash of the API
    /// key — never the key itself). A client file belongs to the credential that first used it.
    public var owner: String
    /// Where the changeset was first written, when the uploader named another identity
    /// (`UploadChangeset.origin`); `nil` when it was written by `clientFileID` as `clientVersion`.
    public var origin: ChangesetOrigin?
    /// The server version of the earlier entry that holds the same origin with the same bytes, when this
    /// entry only acknowledges its upload again (see above); `nil` for an entry that integrated its changeset.
    public var duplicateOf: UInt64?
    /// `CRC32.checksum(data)` when the server computed it already (`ServerCore.storeUploads`, once per
    /// uploaded changeset): `FilePartitionStore` derives the record's checksum from it instead of reading the
    /// bytes again, and the partition's recent cache keeps it for the acknowledgement digest. Not part of the
    /// entry's value (equality and hashing ignore it); other stores never see it set by their own reads.
    var dataChecksum: UInt32?

    /// An entry with the given fields.
    public init(
        serverVersion: UInt64, clientFileID: UInt64, clientVersion: UInt64, data: [UInt8], owner: String = "",
        origin: ChangesetOrigin? = nil, duplicateOf: UInt64? = nil
    ) {
        self.serverVersion = serverVersion
        self.clientFileID = clientFileID
        self.clientVersion = clientVersion
        self.data = data
        self.owner = owner
        self.origin = origin
        self.duplicateOf = duplicateOf
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.serverVersion == rhs.serverVersion && lhs.clientFileID == rhs.clientFileID
            && lhs.clientVersion == rhs.clientVersion && lhs.data == rhs.data && lhs.owner == rhs.owner
            && lhs.origin == rhs.origin && lhs.duplicateOf == rhs.duplicateOf
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(serverVersion)
        hasher.combine(clientFileID)
        hasher.combine(clientVersion)
        hasher.combine(data)
        hasher.combine(owner)
        hasher.combine(origin)
        hasher.combine(duplicateOf)
    }

    /// Where the changeset was first written: `origin`, or this entry's client file and version.
    public var effectiveOrigin: ChangesetOrigin {
        origin ?? ChangesetOrigin(clientFileID: clientFileID, clientVersion: clientVersion)
    }

    /// The bytes other clients receive for this entry: none for a duplicate.
    public var deliveredData: [UInt8] { duplicateOf == nil ? data : [] }

    /// The entry without its bytes.
    public var summary: StoredChangesetSummary {
        StoredChangesetSummary(
            serverVersion: serverVersion, clientFileID: clientFileID, clientVersion: clientVersion,
            byteCount: data.count, owner: owner, origin: origin, duplicateOf: duplicateOf)
    }
}
