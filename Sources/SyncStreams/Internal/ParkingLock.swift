import CSyncStreams
import Synchronization

#if canImport(Darwin)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The relays' lock: spins briefly, then sleeps in the kernel until the holder wakes it.
///
/// Critical sections under it are a few dozen instructions and never call out, so the lock is almost
/// always free or about to be: the uncontended path is one compare-and-swap to lock and one plain
/// releasing store to unlock (no second read-modify-write, which on the reference machine costs as much
/// as a delivery). A contended `lock()` spins for a short while, then registers as a sleeper and sleeps on
/// the lock word (a futex on Linux), so a preempted holder is never starved by spinning waiters and a
/// long wait uses no CPU.
///
/// Why a plain store can unlock: the unlocker stores 0, then (after `AsymmetricFence.light`, free on
/// x86-64) reads the sleeper count and wakes one sleeper if it is non-zero. A thread going to sleep first
/// increments the sleeper count, then runs `AsymmetricFence.heavy()`, then re-reads the lock word and
/// sleeps only while it is still locked (the kernel re-checks the word atomically with respect to
/// wakes). By the fence's guarantee either the unlocker sees the sleeper, or the sleeper sees the
/// unlocked word — never neither, so no wake-up is lost.
///
/// ThreadSanitizer understands it: locking is an acquiring compare-and-swap, unlocking a releasing store.
///
/// On Darwin it is `os_unfair_lock`, which also donates the waiter's priority to the holder.
@usableFromInline
struct ParkingLock: ~Copyable, @unchecked Sendable {
    // @unchecked Sendable: the storage is only touched through atomics (Linux) or the os_unfair_lock API
    // (Darwin), both thread-safe; the pointer itself is immutable.
    #if canImport(Darwin)
        @usableFromInline let unfair: os_unfair_lock_t

        @inlinable
        init() {
            unfair = .allocate(capacity: 1)
            unfair.initialize(to: os_unfair_lock())
        }

        @inlinable
        deinit {
            unfair.deinitialize(count: 1)
            unfair.deallocate()
        }

        @inlinable @inline(__always)
        func lock() { os_unfair_lock_lock(unfair) }

        @inlinable @inline(__always)
        func unlock() { os_unfair_lock_unlock(unfair) }
    #else
        /// Two 32-bit words: the lock word (0 free, 1 held) and the number of sleepers.
        @usableFromInline let words: UnsafeMutablePointer<Atomic<UInt32>>
        /// `AsymmetricFence.isHeavyBarrierAvailable`, kept here so unlocking reads a field, not a global.
        @usableFromInline let heavyBarrierAvailable: Bool

        @inlinable
        init() {
            heavyBarrierAvailable = AsymmetricFence.isHeavyBarrierAvailable
            words = .allocate(capacity: 2)
            (words + 0).initialize(to: Atomic(0))
            (words + 1).initialize(to: Atomic(0))
        }

        @inlinable
        deinit {
            words.deinitialize(count: 2)
            words.deallocate()
        }

        @inlinable @inline(__always)
        func lock() {
            if _fastPath(words[0].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged) { return }
            lockContended()
        }

        @inlinable @inline(__always)
        func unlock() {
            words[0].store(0, ordering: .releasing)
            AsymmetricFence.light(heavyBarrierAvailable: heavyBarrierAvailable)
            if _slowPath(words[1].load(ordering: .relaxed) != 0) {
                csyncstreams_wake_address(UnsafeRawPointer(words), 0)
            }
        }

        @usableFromInline
        func lockContended() {
            // Spin briefly: the holder is usually a few instructions from unlocking. Then yield the processor
            // a few times: on a busy machine the holder may have been preempted, and a yield lets it finish
            // sooner than a sleep would. Then sleep until woken.
            for attempt in 0..<(Self.spins + Self.yields) {
                if words[0].load(ordering: .relaxed) == 0,
                    words[0].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
                {
                    return
                }
                if attempt < Self.tightSpins {
                    continue  // the holder is a few instructions from unlocking: try again at once
                } else if attempt < Self.spins {
                    csyncstreams_spin_hint()
                } else {
                    sched_yield()
                }
            }
            words[1].wrappingAdd(1, ordering: .relaxed)
            AsymmetricFence.heavy()
            while true {
                if words[0].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
                    words[1].wrappingSubtract(1, ordering: .relaxed)
                    return
                }
                csyncstreams_wait_on_address(UnsafeRawPointer(words), 1)
            }
        }

        /// Busy-wait rounds before yielding (the first ones without even a pause), and yields before
        /// sleeping.
        @usableFromInline static var tightSpins: Int { 32 }
        @usableFromInline static var spins: Int { 32 }
        @usableFromInline static var yields: Int { 224 }
    #endif

    @inlinable @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
