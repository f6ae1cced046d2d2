import Foundation
import SyncWire

/// One client reset of a session, as reported by `ClientResetEvent`: why, what the server holds, which
/// client file is replaced by which, and every local changeset the server does not hold.
public struct ClientReset: Sendable, Hashable {
    /// The session's partition.
    public var partition: String
    /// What the session does about the reset.
    public var mode: ClientResetMode
    /// Why the server asked for it.
    public var reason: ClientResetReason
    /// The last server version of the partition's log when the server refused the session.
    public var serverVersion: UInt64
    /// The highest server version the local copy held before the reset. Above `serverVersion`, the
    /// server lost history (other clients' changesets among it are theirs to recover).
    public var previousDownloadedVersion: UInt64
    /// The client file being replaced, and its replacement (which starts from server version 0).
    public var previousClientFileID: UInt64
    public var clientFileID: UInt64
    /// The local changesets the server does not hold, in client-version order: those it never integrated,
    /// and those it acknowledged and then lost (`wasAcknowledged`). Uploaded again in
    /// `.recoverUnsyncedChanges` (under new client versions 1, 2, …), dropped in `.discardUnsyncedChanges`.
    /// Those the server integrated without the client seeing the acknowledgement are not here: they are in
    /// the server's log, and come back with the download.
    public var unsyncedChanges: [UnsyncedChange]

    public init(
        partition: String, mode: ClientResetMode, reason: ClientResetReason, serverVersion: UInt64,
        previousDownloadedVersion: UInt64, previousClientFileID: UInt64, clientFileID: UInt64,
        unsyncedChanges: [UnsyncedChange]
    ) {
        self.partition = partition
        self.mode = mode
        self.reason = reason
        self.serverVersion = serverVersion
        self.previousDownloadedVersion = previousDownloadedVersion
        self.previousClientFileID = previousClientFileID
        self.clientFileID = clientFileID
        self.unsyncedChanges = unsyncedChanges
    }
}
