import SyncWire

/// A bound session's way to talk to the server on the connection it was bound on.
struct BoundChannel: Sendable {
    let connection: any SyncClientConnection
    let sessionID: UInt32
    /// The connection attempt it was bound on.
    let attempt: Int
    /// Which of the session's bindings this is (the session numbers them; 0 until it does).
    var binding: UInt64 = 0
    /// The largest message the server accepts, as its `welcome` said (`nil`: a version 4 server, which
    /// did not say; the client's own limit applies).
    var serverMaximumMessageBytes: Int? = nil

    func send(_ message: ClientMessage) { connection.send(message) }
}
