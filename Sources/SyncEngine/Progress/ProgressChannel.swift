/// One direction of a `ProgressNotifier`: its `IndefiniteProgress` under a lock, and the subject that fans
/// its reports out to every subscriber of that direction.
///
/// Ordering: a report is computed under `state`'s lock, but must be sent after unlocking (never call out
/// while holding a lock). Two threads each computing and then sending could send in the opposite order to
/// the one they computed in, leaving subscribers (and the subject's current value) on a stale report. So
/// reports are queued in the order they are computed, and only one thread sends at a time: the first
/// `update` to find no sender becomes the sender and sends queued reports until the queue is empty; an
/// `update` arriving meanwhile (from another thread, or re-entering from a callback) only queues its
/// report and returns, and the sender delivers it. Every subscriber therefore sees the same sequence of
/// reports, in the order they were computed, none skipped (so no intermediate complete report is lost
/// either). A report equal to the one queued before it is dropped.
///
/// Cost per update: two lock round trips and an array append into a buffer whose capacity is reused (the
/// queue and the sender's batch swap buffers), so the steady state allocates nothing.
final class ProgressChannel: Sendable {
    private struct State {
        var progress = IndefiniteProgress()
        /// The last report queued (also the last one handed to `subject` once the queue is empty).
        var lastQueued: SyncProgress?
        /// Reports computed but not yet sent, oldest first.
        var pending: [SyncProgress] = []
        /// An empty buffer kept for its capacity, swapped with `pending` by the next sender.
        var spare: [SyncProgress] = []
        /// Whether a thread is in the send loop of `update`.
        var isSending = false
    }

    private let state = Locked(State())
    /// The reports, nil until the first update. Sent to only by the thread in the send loop of `update`.
    let subject = CurrentValueSubject<SyncProgress?, Never>(nil)

    init() {}

    /// The latest report, or nil before the first update.
    var current: SyncProgress? { state.withLock { $0.progress.latest } }

    /// Records new counts and queues the resulting report; unless another thread is already sending,
    /// delivers it (and any report queued meanwhile) before returning.
    func update(transferred: Int, transferrable: Int) {
        var batch: [SyncProgress] = []
        let becameSender = state.withLock { state in
            let report = state.progress.update(transferred: transferred, transferrable: transferrable)
            if report != state.lastQueued {
                state.pending.append(report)
                state.lastQueued = report
            }
            guard !state.isSending, !state.pending.isEmpty else { return false }
            state.isSending = true
            swap(&batch, &state.spare)
            swap(&batch, &state.pending)
            return true
        }
        guard becameSender else { return }
        while true {
            for report in batch {
                subject.send(report)
            }
            batch.removeAll(keepingCapacity: true)
            let isDone = state.withLock { state in
                if state.pending.isEmpty {
                    state.isSending = false
                    swap(&batch, &state.spare)
                    return true
                }
                swap(&batch, &state.pending)
                return false
            }
            if isDone { return }
        }
    }
}
