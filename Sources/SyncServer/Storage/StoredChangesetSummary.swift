import SyncWire

/// A log entry without its bytes: what the server keeps in memory about every entry of a partition, so
/// that serving a partition costs memory in proportion to its number of entries, not its size.
public struct StoredChangesetSummary: Sendable, Hashable {
    /// The entry's position in the partition's log, starting at 1.
    public var serverVersion: UInt64
    /// The client file that uploaded it.
    public var clientFileID: UInt64
    /// The uploading client's sequence number for it.
    public var clientVersion: UInt64
    /// The length of its bytes.
    public var byteCount: Int
    /// The identity of the credential that uploaded it (see `StoredChangeset.owner`).
    public var owner: String
    /// Where it was first written, when not here (see `StoredChangeset.origin`).
    public var origin: ChangesetOrigin?
    /// The earlier entry it duplicates (see `StoredChangeset.duplicateOf`).
    public var duplicateOf: UInt64?

    /// A summary with the given fields.
    public init(
        serverVersion: UInt64, clientFileID: UInt64, clientVersion: UInt64, byteCount: Int, owner: String,
        origin: ChangesetOrigin? = nil, duplicateOf: UInt64? = nil
    ) {
        self.serverVersion = serverVersion
        self.clientFileID = clientFileID
        self.clientVersion = clientVersion
        self.byteCount = byteCount
        self.owner = owner
        self.origin = origin
        self.duplicateOf = duplicateOf
    }

    /// Where it was first written: `origin`, or its own client file and version.
    public var effectiveOrigin: ChangesetOrigin {
        origin ?? ChangesetOrigin(clientFileID: clientFileID, clientVersion: clientVersion)
    }

    /// The bytes other clients receive of it: none for a duplicate.
    public var deliveredByteCount: Int { duplicateOf == nil ? byteCount : 0 }
}
