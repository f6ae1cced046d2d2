import SyncStreams

extension SyncSession {
    /// The session's contribution to a `SyncActivity`, from its public streams: its connection state and
    /// its `.reportIndefinitely` progress in both directions (`nil` until the first report).
    var activity: AnySyncStream<SessionActivity, Never> {
        connectionState
            .combineLatest(
                progress(for: .upload, mode: .reportIndefinitely).map { Optional($0) }.prepend(nil),
                progress(for: .download, mode: .reportIndefinitely).map { Optional($0) }.prepend(nil)
            ) { connection, upload, download in
                SessionActivity(connection: connection, upload: upload, download: download)
            }
            .eraseToAnyStream()
    }
}

/// Keeps a `SyncActivity` state up to date from a stream of changing lists of sources, each with its own
/// activity stream — the worked example of dynamic combining: `flatMapLatest` over the list (a new list
/// replaces the previous combination), `SyncStreams.combineLatest` over its members, `removeDuplicates`.
///
/// ```
/// user.sessions ──flatMapLatest { sessions in combineLatest(sessions.map(\.activity)) }──▶ [SessionActivity]
///               ──map(SyncActivity.of)──removeDuplicates──▶ syncActivity
/// ```
final class ActivityTracker: Sendable {
    private let subject = CurrentValueSubject<SyncActivity, Never>(.offline)
    private let token: Locked<SubscriptionToken?> = Locked(nil)

    /// Tracks the activity of `sources`' current members; `activity` gives each member's stream and
    /// `combine` reduces the members' latest values.
    init<Sources: SyncStream, Member: Sendable, Value: Sendable>(
        sources: Sources,
        activity: @escaping @Sendable (Member) -> AnySyncStream<Value, Never>,
        combine: @escaping @Sendable ([Value]) -> SyncActivity
    ) where Sources.Output == [Member], Sources.Failure == Never {
        let subject = subject
        let subscription =
            sources
            .flatMapLatest { members in SyncStreams.combineLatest(members.map(activity)) }
            .map(combine)
            .removeDuplicates()
            .subscribe { subject.send($0) }
        token.withLock { $0 = subscription }
    }

    /// The activity: the current value at once, then each change.
    var state: StateStream<SyncActivity> { StateStream(subject) }

    /// Stops tracking (the owner logged out or closed) and settles the state at `last`.
    func stop(at last: SyncActivity) {
        let subscription = token.withLock { token in
            defer { token = nil }
            return token
        }
        subscription?.invalidate()
        // No callback of the subscription runs after `invalidate()` returned: `last` is the last value.
        subject.send(last)
    }
}
