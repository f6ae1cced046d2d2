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
