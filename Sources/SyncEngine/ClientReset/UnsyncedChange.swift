import Foundation

/// A local changeset the server does not hold, found by a client reset.
public struct UnsyncedChange: Sendable, Hashable {
    /// Its client version in the replaced client file.
    public var clientVersion: UInt64
    /// Its bytes.
    public var data: Data
    /// Whether the server had acknowledged it (and then lost it with its history).
    public var wasAcknowledged: Bool

    public init(clientVersion: UInt64, data: Data, wasAcknowledged: Bool) {
        self.clientVersion = clientVersion
        self.data = data
        self.wasAcknowledged = wasAcknowledged
    }
}
