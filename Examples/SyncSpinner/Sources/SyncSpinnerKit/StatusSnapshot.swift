import Foundation
import SyncEngine

/// Everything the status line shows at one moment.
public struct StatusSnapshot: Sendable, Equatable {
    /// The writer's upload (`.reportIndefinitely`), `nil` before its first report.
    public var upload: SyncProgress?
    /// The reader's download (`.reportIndefinitely`), `nil` before the server's first report.
    public var download: SyncProgress?
    /// The reader's initial download (`.forCurrentlyOutstandingWork`), `nil` before it is known.
    public var initialDownload: SyncProgress?
    /// The bytes of the whole workload.
    public var totalBytes: Int
    /// The bytes the reader holds of it.
    public var syncedBytes: Int
    public var writer: ConnectionState
    public var reader: ConnectionState
    /// The reader's download rate and time remaining (`rate(window:on:)` on its download progress),
    /// `nil` before its first value.
    public var rate: TransferRate?
    /// The writer's pending work (`writer.status`), `nil` before its first status.
    public var pending: PendingWork?
    /// Why the writer is offline (`writer.status`), `nil` while it connects or is connected.
    public var offlineReason: OfflineReason?
    /// When the writer was last fully synced (`writer.status`), `nil` if never.
    public var lastSyncedAt: Date?
    /// The time the line is drawn at (for "synced 3 s ago").
    public var now: Date
    /// Which spinner frame to show.
    public var frame: Int
    /// Seconds since the sync began.
    public var elapsedSeconds: Double

    public init(
        upload: SyncProgress? = nil, download: SyncProgress? = nil, initialDownload: SyncProgress? = nil,
        totalBytes: Int, syncedBytes: Int = 0, writer: ConnectionState = .disconnected,
        reader: ConnectionState = .disconnected, rate: TransferRate? = nil, pending: PendingWork? = nil,
        offlineReason: OfflineReason? = nil, lastSyncedAt: Date? = nil, now: Date = Date(timeIntervalSince1970: 0),
        frame: Int = 0, elapsedSeconds: Double = 0
    ) {
        self.upload = upload
        self.download = download
        self.initialDownload = initialDownload
        self.totalBytes = totalBytes
        self.syncedBytes = syncedBytes
        self.writer = writer
        self.reader = reader
        self.rate = rate
        self.pending = pending
        self.offlineReason = offlineReason
        self.lastSyncedAt = lastSyncedAt
        self.now = now
        self.frame = frame
        self.elapsedSeconds = elapsedSeconds
    }

    /// Whether work is outstanding: the reader does not hold the whole workload yet.
    public var isOutstanding: Bool { syncedBytes < totalBytes }

    /// The share of the workload the reader holds, in 0…1.
    public var fraction: Double {
        totalBytes == 0 ? 1 : min(1, max(0, Double(syncedBytes) / Double(totalBytes)))
    }
}
