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

/// Why a client must reset its copy of a partition. The raw value is what goes on the wire.
public enum ClientResetReason: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The client file was not seen for longer than the server's maximum offline time, and the server
    /// forgot what it knew about it (so it could no longer tell its re-uploads from new changesets).
    case clientExpired = 1
    /// The client holds server versions the server's log does not have: the server lost history.
    case historyLost = 2

    public var description: String {
        switch self {
        case .clientExpired: "offline longer than the server's maximum offline time"
        case .historyLost: "the server lost history the client holds"
        }
    }
}
