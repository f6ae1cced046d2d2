import Foundation

/// A changeset of a partition's log, as the server ordered it.
public struct Changeset: Sendable, Hashable {
    /// The opaque bytes that were written.
    public let data: Data
    /// Its place in the partition's log (1, 2, 3, …), the same on every client.
    public let serverVersion: UInt64

    public init(data: Data, serverVersion: UInt64) {
        self.data = data
        self.serverVersion = serverVersion
    }
}
