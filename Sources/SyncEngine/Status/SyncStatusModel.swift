import Dispatch
import Foundation
import Observation
import SyncStreams

@MainActor
@Observable
public final class SyncStatusModel {
    public private(set) var status: SyncStatus
    public private(set) var connection: ConnectionState
    public private(set) var activity: SyncActivity
    public private(set) var pending: PendingWork
    public private(set) var lastSyncedAt: Date?
    public private(set) var offlineReason: OfflineReason?
    public private(set) var lastError: SyncError?

    public init<Executor: StreamExecutor>(
        _ status: StateStream<SyncStatus>, throttle interval: Duration = .milliseconds(250), on executor: Executor
    ) {
        let current = status.value
        self.status = current
        connection = current.connection
        activity = current.activity
        pending = current.pending
        lastSyncedAt = current.lastSyncedAt
        offlineReason = current.offlineReason
        lastError = current.lastError
    }

    public convenience init(_ status: StateStream<SyncStatus>, throttle interval: Duration = .milliseconds(250)) {
        self.init(status, throttle: interval, on: DispatchQueue.main)
    }
}
