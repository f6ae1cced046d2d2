/// One direction of a `ProgressNotifier`: its `IndefiniteProgress` under a lock, and the subject that fans
/// its reports out to every subscriber of that direction.
///
/// Ordering: a report is computed under `state`'s lock, but must be sent after unlocking (never call out
/// while holding a lock). Two threads each computing and then sending could send in the opposite order to
/// the one they computed in, leaving subscribers (and the subject's current value) on a stale report. So
/// each report is queued on an `OrderedPublisher` while the lock is held, and published after unlocking:
/// every subscriber sees the same sequence of reports, in the order they were computed, none skipped (so
/// no intermediate complete report is lost either). A report equal to the one queued before it is dropped.
final class ProgressChannel: Sendable {
    private struct State {
        var progress = IndefiniteProgress()
        /// The last report queued.
        var lastQueued: SyncProgress?
        var isFinished = false
    }

    private let state = Locked(State())
    private let publisher = OrderedPublisher<ProgressEvent?>(nil)

    init() {}

    /// The reports and stale markers, nil until the first update.
    var subject: CurrentValueSubject<ProgressEvent?, Never> { publisher.subject }

    /// The latest report, or nil before the first update.
    var current: SyncProgress? { state.withLock { $0.progress.latest } }

    /// Records new counts and queues the resulting report; unless another thread is already sending,
    /// delivers it (and any report queued meanwhile) before returning.
    /// Makes `held` the base of the estimates until the first complete point, if nothing was reported yet.
    func start(from held: Int) {
        state.withLock { state in
            guard state.progress.latest == nil else { return }
            state.progress = IndefiniteProgress(base: held)
        }
    }

    /// The latest report is stale (the session's binding ended): registrations made from now on wait for
    /// the next report instead of capturing this one; `current` keeps it.
    func markStale() {
        let queued = state.withLock { state in
            guard !state.isFinished, let last = state.lastQueued else { return false }
            state.lastQueued = nil
            publisher.enqueue(.stale(after: last))
            return true
        }
        if queued { publisher.drain() }
    }

    /// Ends every stream of this direction after the reports queued before (see `ProgressNotifier.finish()`).
    func finish() {
        state.withLock { $0.isFinished = true }
        publisher.finish()
    }

    func update(transferred: Int, transferrable: Int) {
        let queued = state.withLock { state in
            guard !state.isFinished else { return false }
            let report = state.progress.update(transferred: transferred, transferrable: transferrable)
            guard report != state.lastQueued else { return false }
            state.lastQueued = report
            publisher.enqueue(.report(report))
            return true
        }
        if queued { publisher.drain() }
    }
}
