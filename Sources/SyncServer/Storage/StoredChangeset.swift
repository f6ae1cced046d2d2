/// One entry of a partition's log: a client's changeset as the server integrated it.
///
/// A partition's log holds entries with server versions 1, 2, 3, … without gaps, in that order. For each
/// `clientFileID`, client versions grow strictly along the log.
public struct StoredChangeset: Sendable, Hashable {
    /// The entry's position in the partition's log, starting at 1.
    public var serverVersion: UInt64
    /// The client file (a client's local copy of the partition) that uploaded it.
    public var clientFileID: UInt64
    /// The uploading client's sequence number for it.
    public var clientVersion: UInt64
    /// The opaque changeset bytes.
    public var data: [UInt8]

    /// An entry with the given fields.
    public init(serverVersion: UInt64, clientFileID: UInt64, clientVersion: UInt64, data: [UInt8]) {
        self.serverVersion = serverVersion
        self.clientFileID = clientFileID
        self.clientVersion = clientVersion
        self.data = data
    }
}
