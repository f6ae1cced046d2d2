import CSyncStreams
import Synchronization

/// Which callback a relay's drain is calling right now, published so that an `invalidate()` on another
/// thread waits for exactly its own callback — never for another subscriber's.
///
/// Two cases. An event for a single subscriber (the common case: one subscriber, or a targeted event)
/// publishes nothing while it runs: a waiter registers under the relay's lock and the drain, at its next
/// transition under that lock, sees it and announces the end of the event (`announceEventEnd`), which wakes it.
/// An event for several subscribers publishes a position before each callback, as follows.
///
/// The drainer publishes a *position* before each callback: a number that identifies the event and the
/// subscriber's index in that event's snapshot. The numbers only grow, and never repeat: an event with
/// `count` recipients and serial `serial` reserves `serial - count ..< serial` for its callbacks and
/// publishes `serial` itself after the last one (`DeliveryState` advances the serial by `1 + count` per
/// event), all in 64 bits, which never wrap. So a position names one callback of one event, whatever
/// happens to the subscriber list meanwhile (after a removal, the same index is another subscriber in
/// the next event — a different position). Publishing is one relaxed store, a compiler fence and one
/// load of the waiter count (see `AsymmetricFence`); when a waiter is registered, the drainer also wakes
/// the waiters, so a waiter wakes as soon as the drain moves past its subscriber.
///
/// The waiter (`waitWhileCalling`), having marked its subscriber cancelled and registered itself under
/// the relay's lock, runs the heavy side of the fence and reads the position:
/// - before its subscriber: the drainer has not yet read the subscriber's cancelled flag, and will read
///   it after the fence, so it sees the cancellation and skips the callback — no wait;
/// - at its subscriber: the callback runs (or is being skipped) — wait until the position moves;
/// - past it, or another event: nothing of this subscriber runs any more — no wait.
@usableFromInline
struct InFlightCallback: ~Copyable, @unchecked Sendable {
    // @unchecked Sendable: the storage is only touched through atomics; the pointer is immutable.

    /// Word 0: the position (see the type's documentation; 0 before the first); word 1: the number of
    /// registered position waiters; word 2: the serial of the last event whose end was announced.
    @usableFromInline let words: UnsafeMutablePointer<Atomic<UInt64>>
    /// `AsymmetricFence.isHeavyBarrierAvailable`, kept here so publishing reads a field, not a global.
    @usableFromInline let heavyBarrierAvailable: Bool

    @inlinable
    init() {
        heavyBarrierAvailable = AsymmetricFence.isHeavyBarrierAvailable
        words = .allocate(capacity: 3)
        (words + 0).initialize(to: Atomic(0))
        (words + 1).initialize(to: Atomic(0))
        (words + 2).initialize(to: Atomic(0))
    }

    @inlinable
    deinit {
        words.deinitialize(count: 3)
        words.deallocate()
    }

    /// The drainer is about to call the callback at `position` (or has finished the event, for the
    /// event's serial). Call before reading that subscriber's cancelled flag.
    @inlinable @inline(__always)
    func publish(position: UInt64) {
        words[0].store(position, ordering: .releasing)
        AsymmetricFence.light(heavyBarrierAvailable: heavyBarrierAvailable)
        if _slowPath(words[1].load(ordering: .relaxed) != 0) { wakeWaiters() }
    }

    /// Wakes every position waiter (each checks its own position; waking one could leave another asleep
    /// behind a callback that is not its own).
    @usableFromInline
    func wakeWaiters() { csyncstreams_wake_address(positionLowWord, 1) }

    /// The address of the low 32 bits of the position (the kernel waits on 32 bits).
    @inlinable
    var positionLowWord: UnsafeRawPointer { lowWord(of: 0) }

    /// The address of the low 32 bits of word `index`.
    @inlinable
    func lowWord(of index: Int) -> UnsafeRawPointer {
        #if _endian(big)
            UnsafeRawPointer(words + index) + 4
        #else
            UnsafeRawPointer(words + index)
        #endif
    }

    /// The drain finished event `serial`, for which a waiter registered (the relay saw it under its lock).
    /// Call under the relay's lock (so announcements are stored in event order), then
    /// `wakeEventEndWaiters()` after unlocking.
    @usableFromInline
    func announceEventEnd(serial: UInt64) { words[2].store(serial, ordering: .releasing) }

    /// Wakes the waiters of `waitForEventEnd` after an announcement.
    @usableFromInline
    func wakeEventEndWaiters() { csyncstreams_wake_address(lowWord(of: 2), 1) }

    /// Waits until the drain announces the end of event `serial` (or a later one). The waiter registered
    /// under the relay's lock while the event was in flight, so the drain's next transition announces it.
    ///
    /// Full 64-bit serials are compared: they never wrap, so an announcement made any number of events ago
    /// is never taken for a later one. (Before, 32-bit serials were compared modulo 2^32: after 2^31 events
    /// without an announcement the stale one looked later, and the wait was skipped.) The kernel sleeps on
    /// the low 32 bits: the drain changes them with every announcement it wakes us for.
    @usableFromInline
    func waitForEventEnd(serial: UInt64) {
        while true {
            let announced = words[2].load(ordering: .acquiring)
            if announced >= serial { return }
            csyncstreams_wait_on_address(lowWord(of: 2), UInt32(truncatingIfNeeded: announced))
        }
    }

    /// Registers a waiter. Call under the relay's lock, after marking the subscriber cancelled.
    @inlinable
    func registerWaiter() { words[1].wrappingAdd(1, ordering: .relaxed) }

    /// Waits while the drain is at `position` (the removed subscriber's callback in the event in flight);
    /// then unregisters the waiter. Call after `registerWaiter()`, outside the lock.
    ///
    /// The kernel sleeps only while the low 32 bits of the position equal `position`'s: every later
    /// position differs from `position`, and its low 32 bits do too until 2^32 more callbacks have been
    /// published — so the waiter never sleeps behind another subscriber's callback that took its index.
    /// (Before, the futex word was the bare index: after a removal compacted the list, the next event's
    /// callback at the same index kept the waiter asleep.)
    @usableFromInline
    func waitWhileCalling(position: UInt64) {
        AsymmetricFence.heavy()
        while words[0].load(ordering: .acquiring) == position {
            // A drain that moves on after this check has seen the waiter (the fence above) and wakes it.
            #if DEBUG
                RelayWaitObserver.willSleep()
            #endif
            csyncstreams_wait_on_address(positionLowWord, UInt32(truncatingIfNeeded: position))
        }
        words[1].wrappingSubtract(1, ordering: .relaxed)
    }
}
