/// The one timer of a time-based operator (`throttle`, `debounce`, `timeout`), kept in its relay's
/// `Extra` state.
///
/// Scheduling and cancelling call into the executor, so they happen outside the relay's lock: under the
/// lock the operator asks for a timer (`restart()`, which hands back the previous handle to cancel), then
/// schedules it after unlocking and stores the handle (`store`). Each timer carries an epoch; a timer job
/// does something only if `fire(epoch:)` says it is still the current, armed timer. So a timer that fires
/// before its handle is stored, a handle stored after the operator stopped, or a job that starts while
/// it is being cancelled on another thread all do nothing.
struct OperatorTimer {
    /// What to schedule after unlocking: the new timer's epoch and the previous timer to cancel.
    struct Request {
        let epoch: UInt64
        let previous: ScheduledWork?
    }

    private var epoch: UInt64 = 0
    private var handle: ScheduledWork?
    private var isArmed = false
    private var isStopped = false

    /// Arms a new timer, replacing the current one; nil once stopped.
    mutating func restart() -> Request? {
        guard !isStopped else { return nil }
        epoch &+= 1
        isArmed = true
        let previous = handle
        handle = nil
        return Request(epoch: epoch, previous: previous)
    }

    /// Keeps the handle of the timer scheduled for `epoch`, or returns it to be cancelled (outside the
    /// lock) when that timer is no longer current.
    mutating func store(_ scheduled: ScheduledWork, epoch: UInt64) -> ScheduledWork? {
        guard !isStopped, isArmed, epoch == self.epoch else { return scheduled }
        handle = scheduled
        return nil
    }

    /// A timer job runs: whether it is the current armed timer (which it disarms).
    mutating func fire(epoch: UInt64) -> Bool {
        guard !isStopped, isArmed, epoch == self.epoch else { return false }
        isArmed = false
        handle = nil
        return true
    }

    /// Disarms for good; returns the handle to cancel outside the lock.
    mutating func stop() -> ScheduledWork? {
        isStopped = true
        isArmed = false
        let current = handle
        handle = nil
        return current
    }
}
