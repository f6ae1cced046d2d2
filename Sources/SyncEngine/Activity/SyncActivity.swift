/// One answer to "am I synced?" for a set of sessions: what `SyncUser.syncActivity` and
/// `SyncApp.syncActivity` report.
///
/// - `.offline`: no session is connected (none is open, or all are suspended, waiting to reconnect, or
///   stopped).
/// - `.syncing(upload:download:)`: some connected session has bytes to move; the progress values add up
///   the connected sessions' `.reportIndefinitely` counts (a session whose download the server has not
///   reported yet counts as syncing).
/// - `.synced`: every connected session has uploaded everything written and downloaded everything the
///   server reported.
public enum SyncActivity: Sendable, Hashable, CustomStringConvertible {
    case offline
    case syncing(upload: SyncProgress, download: SyncProgress)
    case synced

    public var description: String {
        switch self {
        case .offline: "offline"
        case .syncing(let upload, let download): "syncing (upload \(upload); download \(download))"
        case .synced: "synced"
        }
    }

    /// The activity of sessions in the given states.
    static func of(_ sessions: [SessionActivity]) -> SyncActivity {
        let connected = sessions.filter { $0.connection == .connected }
        guard !connected.isEmpty else { return .offline }
        let uploads = connected.compactMap(\.upload)
        let downloads = connected.compactMap(\.download)
        let complete =
            uploads.count == connected.count && downloads.count == connected.count
            && uploads.allSatisfy(\.isTransferComplete) && downloads.allSatisfy(\.isTransferComplete)
        if complete { return .synced }
        return .syncing(upload: SyncProgress.sum(uploads), download: SyncProgress.sum(downloads))
    }

    /// The activity of several users' (or apps') activities: offline when all are offline, synced when all
    /// that are not offline are synced, otherwise syncing with the counts added up.
    static func combined(_ activities: [SyncActivity]) -> SyncActivity {
        var uploads: [SyncProgress] = []
        var downloads: [SyncProgress] = []
        var online = false
        for activity in activities {
            switch activity {
            case .offline: continue
            case .synced: online = true
            case .syncing(let upload, let download):
                online = true
                uploads.append(upload)
                downloads.append(download)
            }
        }
        guard online else { return .offline }
        guard !uploads.isEmpty else { return .synced }
        return .syncing(upload: SyncProgress.sum(uploads), download: SyncProgress.sum(downloads))
    }
}

/// What one session contributes to a `SyncActivity`: its connection state and its latest progress in
/// each direction (`nil` until the first report).
struct SessionActivity: Sendable, Hashable {
    var connection: ConnectionState
    var upload: SyncProgress?
    var download: SyncProgress?
}

extension SyncProgress {
    /// The counts of `values` added up (saturating), with the plain fraction as the estimate.
    static func sum(_ values: [SyncProgress]) -> SyncProgress {
        var transferred = 0
        var transferrable = 0
        for value in values {
            transferred = transferred.addingClamped(value.transferredBytes)
            transferrable = transferrable.addingClamped(value.transferrableBytes)
        }
        let estimate =
            transferred >= transferrable ? 1 : SyncProgress.incompleteFraction(transferred, of: transferrable)
        return SyncProgress(
            transferredBytes: transferred, transferrableBytes: transferrable, progressEstimate: estimate)
    }
}
