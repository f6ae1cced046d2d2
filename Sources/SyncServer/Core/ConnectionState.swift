/// What the core knows about one connection. Owned by `ServerCore`.
final class ConnectionState {
    /// Where a connection is in the protocol.
    enum Phase {
        /// Nothing but `hello` is acceptable yet.
        case awaitingHello
        /// `welcome` was sent; the credential may bind these partitions.
        case ready(PartitionAccess)
        /// The server closed it after a connection-level error, or it ended; later messages are ignored.
        case closed
    }

    let handle: ConnectionHandle
    var phase = Phase.awaitingHello
    /// The identity of the credential the client said hello with (see `StoredChangeset.owner`).
    var owner = ""
    /// The protocol version the client said hello with (0 before `hello`).
    var protocolVersion: UInt16 = 0
    /// Bound sessions by the client's session number.
    var sessions: [UInt32: BoundSession] = [:]

    init(handle: ConnectionHandle) { self.handle = handle }
}
