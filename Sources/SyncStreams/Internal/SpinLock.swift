import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small lock for very short critical sections: the relays' lock.
///
/// Locking is one compare-and-swap; unlocking is one releasing store (no read-modify-write), which is
/// what makes it cheaper than a pthread mutex on the hot path (atomic read-modify-writes dominate the cost
/// of a delivery). Contention spins briefly, then yields the processor, so a preempted holder gets to
/// run. Only for critical sections that never block and never call out — which is every relay's rule.
///
/// ThreadSanitizer understands it: it is built from atomic acquire/release operations, which TSan models
/// (unlike `Synchronization.Mutex` on Linux).
@usableFromInline
final class SpinLock: Sendable {
    @usableFromInline let word = Atomic<UInt32>(0)

    @inlinable
    init() {}

    @inlinable @inline(__always)
    func lock() {
        if _fastPath(word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged) { return }
        lockContended()
    }

    @usableFromInline
    func lockContended() {
        var backoff = Backoff()
        while true {
            if word.load(ordering: .relaxed) == 0,
                word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
            {
                return
            }
            backoff.pause()
        }
    }

    @inlinable @inline(__always)
    func unlock() { word.store(0, ordering: .releasing) }
}

/// Spin a little, then yield, then sleep briefly: for waits expected to be very short.
@usableFromInline
struct Backoff {
    @usableFromInline var attempts = 0

    @inlinable
    init() {}

    @usableFromInline
    mutating func pause() {
        attempts += 1
        if attempts <= 32 {
            return
        } else if attempts <= 256 {
            sched_yield()
        } else {
            usleep(50)
        }
    }
}
