import Foundation

/// One immutable snapshot of a session's sync status: what a status bar shows, in one value.
///
/// `SyncSession.status` publishes it as a `StateStream`: the current snapshot at once, then a new one only
/// when something here changes — never per byte (progress moves when the store commits a batch, and
/// snapshots that arrive faster than the callback executor runs are conflated to the newest).
public struct SyncStatus: Sendable, Equatable, CustomStringConvertible {
    /// The session's connection.
    public var connection: ConnectionState
    /// Offline, syncing (with the progress counts) or synced: the session's `SyncActivity`.
    public var activity: SyncActivity
    /// Work not synced yet, even while offline or idle (read from the local store, so right after a launch).
    public var pending: PendingWork
    /// When the session was last fully synced: everything written was acknowledged and everything the
    /// server reported was downloaded, while connected (while it stays synced: the time of the server's
    /// latest report that found it so). Kept in the local store, so a relaunch shows it
    /// before connecting; `nil` for a store that was never fully synced (a new store, one deleted with
    /// `deleteLocalFiles`, or one a client reset replaced).
    public var lastSyncedAt: Date?
    /// Why the session does not sync; `nil` while it is connected, or connecting.
    public var offlineReason: OfflineReason?
    /// The last error the session met; cleared when the session next connects (bound) or, for a storage
    /// error, when the store next commits. A fatal error is never cleared.
    public var lastError: SyncError?

    public init(
        connection: ConnectionState,
        activity: SyncActivity,
        pending: PendingWork,
        lastSyncedAt: Date?,
        offlineReason: OfflineReason?,
        lastError: SyncError?
    ) {
        self.connection = connection
        self.activity = activity
        self.pending = pending
        self.lastSyncedAt = lastSyncedAt
        self.offlineReason = offlineReason
        self.lastError = lastError
    }

    /// Unacknowledged local changesets (`pending.uploadChangesets`).
    public var pendingUploadChangesets: Int { pending.uploadChangesets }
    /// Bytes of unacknowledged local changesets (`pending.uploadBytes`).
    public var pendingUploadBytes: Int { pending.uploadBytes }
    /// Bytes the server reported still to send (`pending.downloadBytes`); `nil` when unknown.
    public var pendingDownloadBytes: Int? { pending.downloadBytes }

    public var description: String {
        var parts = ["\(connection)", "\(activity)", "\(pending)"]
        if let lastSyncedAt { parts.append("last synced \(lastSyncedAt)") }
        if let offlineReason { parts.append("offline: \(offlineReason)") }
        if let lastError { parts.append("last error: \(lastError)") }
        return parts.joined(separator: ", ")
    }
}

/// Work not synced yet.
public struct PendingWork: Sendable, Hashable, CustomStringConvertible {
    /// Local changesets written (durable) and not yet acknowledged by the server.
    public var uploadChangesets: Int
    /// Their bytes.
    public var uploadBytes: Int
    /// Bytes the server reported it still has to send; `nil` while unknown (before the server's first
    /// report on the current connection, or offline).
    public var downloadBytes: Int?

    public init(uploadChangesets: Int, uploadBytes: Int, downloadBytes: Int?) {
        self.uploadChangesets = uploadChangesets
        self.uploadBytes = uploadBytes
        self.downloadBytes = downloadBytes
    }

    /// Nothing to upload, and nothing known to download.
    public static let none = PendingWork(uploadChangesets: 0, uploadBytes: 0, downloadBytes: nil)

    public var description: String {
        "\(uploadChangesets) changesets (\(uploadBytes) bytes) to upload, "
            + (downloadBytes.map { "\($0) bytes to download" } ?? "download unknown")
    }
}

/// Why a session is not syncing.
public enum OfflineReason: Sendable, Hashable, CustomStringConvertible {
    /// `suspend()` (or `close()`) made the session inactive; `resume()` syncs again.
    case suspended
    /// The connection (or the session's binding) failed; the next attempt is at `next`. `reconnect()`
    /// tries at once.
    case waitingToReconnect(next: Date, lastError: SyncError?)
    /// The server refused the credential, or the partition for it (fatal).
    case credentialRefused
    /// A client reset replaces the local store; the session syncs again when it is done. Also the reason
    /// of a session stopped by a reset it could not do (`.manual` mode).
    case clientReset
    /// The session is closed for good: the app closed, the user logged out, or a fatal error stopped it
    /// (see `SyncStatus.lastError`).
    case closed

    public var description: String {
        switch self {
        case .suspended: "suspended"
        case .waitingToReconnect(let next, let error):
            "waiting to reconnect at \(next)" + (error.map { " after \($0)" } ?? "")
        case .credentialRefused: "credential refused"
        case .clientReset: "client reset in progress"
        case .closed: "closed"
        }
    }
}
