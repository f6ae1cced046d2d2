/// What a `ParkingLock` watches, while it is not biased, to decide whether to bias itself to one thread:
/// the thread that took it last and how many times in a row, and how many times the taker changed.
///
/// Only read and written with the lock word held. A lock taken `threshold` times in a row by one thread is
/// biased to it; one whose taker changed more than `maximumChanges` times is shared, and stops watching.
@usableFromInline
struct BiasWatch {
    /// The serial of the thread that took the lock last (0: none yet).
    @usableFromInline var taker: UInt64 = 0
    /// How many times in a row `taker` took it.
    @usableFromInline var streak: UInt32 = 0
    /// How many times the taker changed.
    @usableFromInline var changes: UInt32 = 0

    /// Acquisitions in a row by one thread that bias the lock to it.
    @usableFromInline static var threshold: UInt32 { 64 }
    /// Changes of taker after which the lock counts as shared and is never biased.
    @usableFromInline static var maximumChanges: UInt32 { 16 }

    @usableFromInline
    init() {}

    /// Records that `taker` took the lock; true when the lock should now be biased to it.
    @usableFromInline
    mutating func observe(taker newTaker: UInt64) -> Bool {
        if newTaker == taker {
            streak &+= 1
            return streak >= Self.threshold
        }
        if taker != 0 { changes &+= 1 }
        taker = newTaker
        streak = 1
        return false
    }
}
