/// Names a bound session server-wide: the connection it is on and the client's number for it.
struct SessionKey: Hashable, Sendable {
    let connectionID: UInt64
    let sessionID: UInt32
}
