/// One direction of a `ProgressNotifier`: its `IndefiniteProgress` under a lock, and the subject that fans
/// its reports out to every subscriber of that direction.
///
/// Ordering: a report is computed under `state`'s lock, but must be sent after unlocking (never call out
/// while holding a lock). Two threads each computing and then sending could send in the opposite order to
/// the one they computed in, leaving subscribers (and the subject's current value) on a stale report. So
/// only one thread sends at a time: the first `update` to find no sender becomes the sender and sends the
/// latest report until none is left unsent; an `update` arriving meanwhile (from another thread, or
/// re-entering from a callback) only records its counts and returns, and the sender picks them up. Every
/// subscriber therefore sees the same sequence of reports, in the order they were computed; intermediate
/// reports that were superseded before being sent are skipped, the latest one never is. Consecutive equal
/// reports are sent once.
final class ProgressChannel: Sendable {
    private struct State {
        var progress = IndefiniteProgress()
        /// The last report handed to `subject`.
        var sent: SyncProgress?
        /// Whether a thread is in the send loop of `update`.
        var isSending = false
    }

    private let state = Locked(State())
    /// The reports, nil until the first update. Sent to only by the thread in the send loop.
    let subject = CurrentValueSubject<SyncProgress?, Never>(nil)

    init() {}

    /// The latest report, or nil before the first update.
    var current: SyncProgress? { state.withLock { $0.progress.latest } }

    /// Records new counts and, unless another thread is already sending, delivers the resulting report.
    func update(transferred: Int, transferrable: Int) {
        let becameSender = state.withLock { state in
            state.progress.update(transferred: transferred, transferrable: transferrable)
            guard !state.isSending, state.progress.latest != state.sent else { return false }
            state.isSending = true
            return true
        }
        guard becameSender else { return }
        while let next = nextUnsent() {
            subject.send(next)
        }
    }

    /// The latest report if it has not been sent yet (marking it sent); otherwise leaves the send loop.
    private func nextUnsent() -> SyncProgress? {
        state.withLock { state in
            guard let latest = state.progress.latest, latest != state.sent else {
                state.isSending = false
                return nil
            }
            state.sent = latest
            return latest
        }
    }
}
