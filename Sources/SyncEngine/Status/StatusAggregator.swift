import Foundation
import SyncStreams

extension SyncStatus {
    /// The status of nothing to sync: disconnected, offline, nothing pending, no reason, no error.
    static let empty = SyncStatus(
        connection: .disconnected, activity: .offline, pending: .none, lastSyncedAt: nil, offlineReason: nil,
        lastError: nil)

    /// The status of several sessions (or users) together — what `SyncUser.status` and `SyncApp.status`
    /// report:
    ///
    /// | field | combined as |
    /// | --- | --- |
    /// | `connection` | the least connected: `.disconnected` if any is, else `.connecting` if any is |
    /// | `activity` | `SyncActivity`'s combination: offline when all are, synced when all online ones are, counts added |
    /// | `pending` | added up; `downloadBytes` is `nil` when any member's is unknown |
    /// | `lastSyncedAt` | the oldest (all were synced then); `nil` when any member was never synced |
    /// | `offlineReason` | the most severe: credential refused, client reset, waiting to reconnect (the earliest next attempt), suspended, closed |
    /// | `lastError` | a fatal one first, else the first member's (in the order of the list) |
    ///
    /// No members: `.disconnected`, `.offline`, nothing pending, no reason, no error.
    static func combined(_ statuses: [SyncStatus]) -> SyncStatus {
        guard !statuses.isEmpty else { return .empty }
        let connection: ConnectionState =
            statuses.contains { $0.connection == .disconnected }
            ? .disconnected : statuses.contains { $0.connection == .connecting } ? .connecting : .connected
        var pending = PendingWork(uploadChangesets: 0, uploadBytes: 0, downloadBytes: 0)
        for status in statuses {
            pending.uploadChangesets = pending.uploadChangesets.addingClamped(status.pending.uploadChangesets)
            pending.uploadBytes = pending.uploadBytes.addingClamped(status.pending.uploadBytes)
            if let known = pending.downloadBytes, let more = status.pending.downloadBytes {
                pending.downloadBytes = known.addingClamped(more)
            } else {
                pending.downloadBytes = nil
            }
        }
        let dates = statuses.map(\.lastSyncedAt)
        let lastSyncedAt = dates.contains(nil) ? nil : dates.compactMap { $0 }.min()
        let reason = statuses.compactMap(\.offlineReason).min { $0.severityRank < $1.severityRank }
        let errors = statuses.compactMap(\.lastError)
        return SyncStatus(
            connection: connection,
            activity: SyncActivity.combined(statuses.map(\.activity)),
            pending: pending,
            lastSyncedAt: lastSyncedAt,
            offlineReason: reason,
            lastError: errors.first(where: \.isFatal) ?? errors.first)
    }
}

extension OfflineReason {
    /// Lower is more severe; among waits, the earliest next attempt first.
    fileprivate var severityRank: Double {
        switch self {
        case .credentialRefused: -3
        case .clientReset: -2
        case .waitingToReconnect(let next, _): -1 + min(max(next.timeIntervalSince1970, 0), 1e15) / 1e16
        case .suspended: 0
        case .closed: 1
        }
    }
}

/// Keeps a combined `SyncStatus` up to date from a changing list of members (a user's sessions, an app's
/// users), each with its own status stream: `flatMapLatest` over the list, `SyncStreams.combineLatest` over
/// the members' streams, `SyncStatus.combined`, `removeDuplicates` — as `ActivityTracker` does for
/// `SyncActivity`.
final class StatusAggregator: Sendable {
    private let subject = CurrentValueSubject<SyncStatus, Never>(.empty)
    private let token: Locked<SubscriptionToken?> = Locked(nil)

    init<Sources: SyncStream, Member: Sendable>(
        sources: Sources,
        status: @escaping @Sendable (Member) -> StateStream<SyncStatus>
    ) where Sources.Output == [Member], Sources.Failure == Never {
        let subject = subject
        let subscription =
            sources
            .flatMapLatest { members in SyncStreams.combineLatest(members.map(status)) }
            .map(SyncStatus.combined)
            .removeDuplicates()
            .subscribe { subject.send($0) }
        token.withLock { $0 = subscription }
    }

    /// The combined status: the current value at once, then each change.
    var state: StateStream<SyncStatus> { StateStream(subject) }

    /// Stops (the owner logged out or closed): a final `.closed` snapshot, then the stream finishes.
    func finish() {
        let subscription = token.withLock { token in
            defer { token = nil }
            return token
        }
        subscription?.invalidate()
        var last = SyncStatus.empty
        last.offlineReason = .closed
        subject.send(last)
        subject.send(completion: .finished)
    }
}
