/// The state machine behind one direction of a `ProgressNotifier`: the latest counts, and the
/// `.reportIndefinitely` estimate computed with the direction's base (the transferred count at the last
/// complete point).
///
/// A value type without threads or locks, so every transition is unit-tested directly; the notifier keeps
/// one per direction under its lock.
///
/// ```
/// update:  (0,100)  (50,100)  (100,100)  (100,200)  (150,200)
/// base:    0        0         100        100        100
/// latest:  0.0      0.5       1.0 ✓      0.0        0.5
/// ```
struct IndefiniteProgress: Sendable, Hashable {
    /// The transferred count at the last complete point; 0 before the first one.
    private(set) var base = 0
    /// The latest report, or nil before the first update.
    private(set) var latest: SyncProgress?

    init() {}

    /// Progress whose first estimates count from `base` transferred bytes, as if it had been complete there
    /// (a session's store at launch: what it held was complete when it was last synced).
    init(base: Int) { self.base = max(base, 0) }

    /// Records new cumulative counts and returns the resulting report.
    ///
    /// Sanitizes the input: a negative count becomes 0, and a transferrable count below the transferred one
    /// is raised to it. Should the transferred count drop below the base (the counters were reset), the base
    /// follows it down, so the estimate's denominator stays positive whenever the transfer is incomplete.
    @discardableResult
    mutating func update(transferred: Int, transferrable: Int) -> SyncProgress {
        let transferred = max(transferred, 0)
        let transferrable = max(transferrable, transferred)
        base = min(base, transferred)
        let estimate: Double
        if transferred >= transferrable {
            base = transferred
            estimate = 1
        } else {
            // transferrable > transferred >= base >= 0: no overflow, positive denominator.
            estimate = SyncProgress.incompleteFraction(transferred - base, of: transferrable - base)
        }
        let progress = SyncProgress(
            transferredBytes: transferred, transferrableBytes: transferrable, progressEstimate: estimate)
        latest = progress
        return progress
    }
}
