import Dispatch
import Foundation
import Observation
import SyncStreams

/// A `SyncStatus` for SwiftUI and anything else that uses Observation: an `@Observable` object on the main
/// actor that mirrors a `status` stream (`session.status`, `user.status` or `app.status`), throttled for UI.
///
/// - It starts with the stream's current value (readable at once), then follows the stream through
///   `throttle(for: interval, on: executor, latest: true)`: at most one update per `interval`, the newest
///   value of a burst at the window's end, and never a lost final value.
/// - Each field is its own observable property, set only when its value changes: a view that reads
///   `connection` is not invalidated when only `pending` changed, and nothing fires when nothing a reader
///   sees changed.
/// - Updates run on `executor`, which must run its work on the main actor: the main queue (the default),
///   or a `TestExecutor` advanced from the main actor in tests. Anything else stops the program at the
///   first update (`MainActor.assumeIsolated`), so the model's isolation is never violated silently.
/// - It observes for as long as it lives: letting go of it ends the subscription. After the stream
///   finished (the session, user or app closed) it keeps the last snapshot (`offlineReason == .closed`).
///
/// ```swift
/// struct SyncBadge: View {
///     @State private var model = SyncStatusModel(session.status)
///     var body: some View {
///         Label(model.activity == .synced ? "Synced" : "\(model.pending.uploadChangesets) to upload",
///               systemImage: model.connection == .connected ? "icloud" : "icloud.slash")
///     }
/// }
/// ```
@MainActor
@Observable
public final class SyncStatusModel {
    /// The whole snapshot; changes whenever any field does.
    public private(set) var status: SyncStatus
    /// `status.connection`.
    public private(set) var connection: ConnectionState
    /// `status.activity`.
    public private(set) var activity: SyncActivity
    /// `status.pending`.
    public private(set) var pending: PendingWork
    /// `status.lastSyncedAt`.
    public private(set) var lastSyncedAt: Date?
    /// `status.offlineReason`.
    public private(set) var offlineReason: OfflineReason?
    /// `status.lastError`.
    public private(set) var lastError: SyncError?

    /// The stream's subscription; released (and so ended) with the model.
    @ObservationIgnored private var token: SubscriptionToken?

    /// Mirrors `status`, updated at most once per `interval` on `executor` (which must run its work on
    /// the main actor).
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
        token = status.throttle(for: interval, on: executor, latest: true).subscribe { [weak self] value in
            MainActor.assumeIsolated { self?.apply(value) }
        }
    }

    /// Mirrors `status`, updated at most once per `interval` on the main queue.
    public convenience init(_ status: StateStream<SyncStatus>, throttle interval: Duration = .milliseconds(250)) {
        self.init(status, throttle: interval, on: DispatchQueue.main)
    }

    /// Sets each field that changed, and only those (an `@Observable` setter notifies even when the value
    /// is the same).
    private func apply(_ new: SyncStatus) {
        guard new != status else { return }
        status = new
        if connection != new.connection { connection = new.connection }
        if activity != new.activity { activity = new.activity }
        if pending != new.pending { pending = new.pending }
        if lastSyncedAt != new.lastSyncedAt { lastSyncedAt = new.lastSyncedAt }
        if offlineReason != new.offlineReason { offlineReason = new.offlineReason }
        if lastError != new.lastError { lastError = new.lastError }
    }
}
