/// A session bound to a partition: where to send its downloads and how to recognise its own changesets.
struct BoundSession: Sendable {
    let connection: ConnectionHandle
    let sessionID: UInt32
    let partition: String
    let clientFileID: UInt64

    var key: SessionKey { SessionKey(connectionID: connection.id, sessionID: sessionID) }
}
