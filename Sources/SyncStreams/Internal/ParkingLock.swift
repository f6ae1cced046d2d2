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
/// Biased to one thread (Linux, with `membarrier`): a lock taken `BiasWatch.threshold` times in a row by
/// one thread — a subject fed from one thread, the usual case — is biased to that thread, which from then on
/// locks with plain loads and stores and no compare-and-swap: it stores its serial in `inside`, then (after
/// `AsymmetricFence.light`, no instruction) checks the bias still names it; unlocking stores 0 to `inside`.
/// Any other thread takes the lock word first, then revokes the bias for good: it stores "nobody", runs
/// `AsymmetricFence.heavy()`, and waits until `inside` is 0. By the fence's guarantee either the owner sees
/// the revocation (and takes the lock word like everyone else) or the revoker sees the owner inside (and
/// waits for it to leave) — never neither. Revoking costs one `membarrier` (microseconds), once in a
/// lock's life; a lock whose taker keeps changing stops watching after `BiasWatch.maximumChanges` changes
/// and is never biased. Thread serials are never reused (`csyncstreams_thread_serial_get`), so a thread
/// that ends leaves a bias nobody can use, which the next thread revokes.
///
/// ThreadSanitizer understands it: locking is an acquiring compare-and-swap, unlocking a releasing store;
/// a revoker's acquiring read of `inside` reads the owner's releasing store of 0.
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
        /// The lock's words, in one cache line of their own: the lock word (a 32-bit futex word: 0 free,
        /// 1 held), the number of sleepers, and the bias (see "Biased to one thread" in the type's
        /// documentation).
        @usableFromInline let storage: UnsafeMutableRawPointer

        /// `words[0]` is the lock word, `words[1]` the number of sleepers.
        @inlinable
        var words: UnsafeMutablePointer<Atomic<UInt32>> { storage.assumingMemoryBound(to: Atomic<UInt32>.self) }
        /// The bias: 0 while the lock is watching for a single user, that thread's serial once biased to it,
        /// 1 for ever after (revoked, given up, or no heavy barrier on this system). Changes only with the
        /// lock word held, and only in that order.
        @inlinable
        var owner: UnsafeMutablePointer<Atomic<UInt64>> {
            (storage + 8).assumingMemoryBound(to: Atomic<UInt64>.self)
        }
        /// The owner's serial while it holds the lock through the bias, 0 otherwise. Written only by the
        /// owner.
        @inlinable
        var inside: UnsafeMutablePointer<Atomic<UInt64>> {
            (storage + 16).assumingMemoryBound(to: Atomic<UInt64>.self)
        }
        /// While watching (owner 0), with the lock word held: the thread that took the lock last, how many
        /// times in a row, and how many times the taker changed.
        @inlinable
        var watch: UnsafeMutablePointer<BiasWatch> { (storage + 24).assumingMemoryBound(to: BiasWatch.self) }
        /// `AsymmetricFence.isHeavyBarrierAvailable`, kept here so unlocking reads a field, not a global.
        @usableFromInline let heavyBarrierAvailable: Bool

        @inlinable
        init() {
            heavyBarrierAvailable = AsymmetricFence.isHeavyBarrierAvailable
            storage = .allocate(byteCount: 64, alignment: 64)
            storage.bindMemory(to: Atomic<UInt32>.self, capacity: 2)
            (storage + 0).assumingMemoryBound(to: Atomic<UInt32>.self).initialize(to: Atomic(0))
            (storage + 4).assumingMemoryBound(to: Atomic<UInt32>.self).initialize(to: Atomic(0))
            (storage + 8).bindMemory(to: Atomic<UInt64>.self, capacity: 2)
            // Without the heavy barrier the bias cannot be revoked safely: never biased.
            (storage + 8).assumingMemoryBound(to: Atomic<UInt64>.self)
                .initialize(to: Atomic(heavyBarrierAvailable ? 0 : 1))
            (storage + 16).assumingMemoryBound(to: Atomic<UInt64>.self).initialize(to: Atomic(0))
            (storage + 24).bindMemory(to: BiasWatch.self, capacity: 1).initialize(to: BiasWatch())
        }

        @inlinable
        deinit {
            storage.deallocate()
        }

        @inlinable @inline(__always)
        func lock() {
            let biasedTo = owner.pointee.load(ordering: .relaxed)
            if _fastPath(biasedTo == 1) {
                // Not biased (the usual state of a lock shared by threads): the plain lock.
                if _fastPath(words[0].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged) {
                    return
                }
                lockContended()
                return
            }
            if biasedTo != 0 {
                let me = csyncstreams_thread_serial_get()
                if _fastPath(biasedTo == me) {
                    // The owner: announce itself, then check the bias still stands. The revoker stores the
                    // bias first and then reads `inside`; `AsymmetricFence` guarantees at least one of the
                    // two sees the other's store.
                    inside.pointee.store(me, ordering: .relaxed)
                    csyncstreams_compiler_barrier()  // the light side (a bias exists only with the heavy one)
                    if _fastPath(owner.pointee.load(ordering: .relaxed) == me) { return }
                    inside.pointee.store(0, ordering: .releasing)
                }
            }
            lockAndSettleBias()
        }

        @inlinable @inline(__always)
        func unlock() {
            let holder = inside.pointee.load(ordering: .relaxed)
            if holder != 0, holder == csyncstreams_thread_serial_get() {
                // Held through the bias: the owner's releasing store orders its critical section before a
                // revoker's acquiring read of `inside`.
                inside.pointee.store(0, ordering: .releasing)
                return
            }
            words[0].store(0, ordering: .releasing)
            AsymmetricFence.light(heavyBarrierAvailable: heavyBarrierAvailable)
            if _slowPath(words[1].load(ordering: .relaxed) != 0) {
                csyncstreams_wake_address(UnsafeRawPointer(words), 0)
            }
        }

        /// Takes the lock word, then settles the bias with it held: revokes another thread's, or watches
        /// for a single user.
        @usableFromInline
        func lockAndSettleBias() {
            if !words[0].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
                lockContended()
            }
            let biasedTo = owner.pointee.load(ordering: .relaxed)
            if biasedTo == 1 { return }
            let me = csyncstreams_thread_serial_get()
            if biasedTo == 0 {
                if watch.pointee.observe(taker: me) { owner.pointee.store(me, ordering: .relaxed) }
                if watch.pointee.changes > BiasWatch.maximumChanges { owner.pointee.store(1, ordering: .relaxed) }
                return
            }
            // Biased to another thread (never to this one: its own bias would have let it in, and a bias
            // only ever goes to 1 after it is set): revoke it, then wait until the owner is not inside.
            owner.pointee.store(1, ordering: .relaxed)
            AsymmetricFence.heavy()
            var attempt = 0
            #if DEBUG
                if inside.pointee.load(ordering: .relaxed) != 0 { BiasRevocationObserver.sawOwnerInside() }
            #endif
            while inside.pointee.load(ordering: .acquiring) != 0 {
                // The owner's critical section is a few dozen instructions; if it was preempted, yielding
                // lets it finish.
                if attempt < Self.spins { csyncstreams_spin_hint() } else { sched_yield() }
                attempt += 1
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

        /// The bias's state, for tests: nil while watching, the owner's serial when biased, 1 when never.
        var biasOwner: UInt64? {
            let value = owner.pointee.load(ordering: .relaxed)
            return value == 0 ? nil : value
        }

        /// The calling thread's serial, as a bias names it (for tests).
        static var currentThreadSerial: UInt64 { csyncstreams_thread_serial_get() }

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
