/// What a server says with `ProtocolErrorCode.clientResetRequired`, so that the client can reset its copy
/// of the partition and upload again exactly what the server lacks: never a changeset twice, never one lost.
///
/// The client's changesets with client versions up to `lastIntegratedClientVersion` are in the server's log
/// (a reset client receives them again, as ordinary changesets, when it downloads the log afresh); those
/// above it the server never integrated, or integrated and lost, and a client that recovers its changes
/// uploads them again under a new client file.
public struct ClientResetDetails: Sendable, Hashable {
    /// Why the server refused the client file.
    public var reason: ClientResetReason
    /// The last server version of the partition's log when the server refused the bind.
    public var serverVersion: UInt64
    /// The highest client version of the refused client file the server's log holds (0 for none).
    public var lastIntegratedClientVersion: UInt64

    public init(reason: ClientResetReason, serverVersion: UInt64, lastIntegratedClientVersion: UInt64) {
        self.reason = reason
        self.serverVersion = serverVersion
        self.lastIntegratedClientVersion = lastIntegratedClientVersion
    }
}
