/// One entry of a partition's log: a client's changeset as the server integrated it.
///
/// A partition's log holds entries with server versions 1, 2, 3, … without gaps, in that order. For each
/// `clientFileID`, client versions follow each other (1, 2, 3, …) along the log, and every entry of one
/// client file has the same `owner`.
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

    /// An entry with the given fields.
    public init(serverVersion: UInt64, clientFileID: UInt64, clientVersion: UInt64, data: [UInt8], owner: String = "") {
        self.serverVersion = serverVersion
        self.clientFileID = clientFileID
        self.clientVersion = clientVersion
        self.data = data
        self.owner = owner
    }

    /// The entry without its bytes.
    public var summary: StoredChangesetSummary {
        StoredChangesetSummary(
            serverVersion: serverVersion, clientFileID: clientFileID, clientVersion: clientVersion,
            byteCount: data.count, owner: owner)
    }
}
