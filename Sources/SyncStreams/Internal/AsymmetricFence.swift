import CSyncStreams
import Synchronization

/// Store→load ordering between a side that runs constantly (a lock's unlock, a drain publishing which
/// callback it is in) and a side that runs rarely (a thread about to sleep, an `invalidate()` racing a
/// delivery).
///
/// The pattern both users follow (a Dekker handshake): the frequent side stores X, then loads Y; the
/// rare side stores Y, then loads X; at least one of them must see the other's store. That needs a full
/// (store→load) barrier on *both* sides — on x86-64 an `mfence` or a locked instruction, several
/// nanoseconds, which would double the cost of a delivery. Instead the rare side pays for both: Linux's
/// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` makes every running thread of the process execute a
/// full barrier before it returns, so the frequent side only needs the compiler not to reorder its store
/// and load (`light()`, which emits no instruction on x86-64). Formally: each other thread's accesses are
/// split at the point it executed that barrier; if its load ran before that point, so did its store
/// (program order, kept by the compiler fence), and the store is visible to the rare side's load after
/// `heavy()` returns; if its load ran after it, it sees the rare side's store.
///
/// Where the heavy barrier is unavailable (other systems, or a kernel or sandbox without `membarrier`),
/// both sides use a sequentially consistent fence: correct everywhere, slower on the frequent side.
@usableFromInline
enum AsymmetricFence {
    /// Whether `heavy()` is Linux's expedited `membarrier` (decided once per process, before the first
    /// use of either side).
    @usableFromInline
    static let isHeavyBarrierAvailable: Bool = {
        #if arch(x86_64) && os(Linux)
            return csyncstreams_heavy_barrier_prepare() != 0
        #else
            // On other architectures a compiler-only fence is not enough with this scheme's reasoning
            // about store buffers alone (weaker memory models reorder more); keep full fences there.
            return false
        #endif
    }()

    /// The frequent side's fence, between its store and its load. `heavyBarrierAvailable` is
    /// `isHeavyBarrierAvailable`, read once by the caller and kept (reading the global itself costs a
    /// call to its lazy initializer's check on every use).
    @inlinable @inline(__always)
    static func light(heavyBarrierAvailable: Bool) {
        if _fastPath(heavyBarrierAvailable) {
            // Not sequentially consistent: x86-64 emits no instruction for it, and the compiler keeps
            // the store and the load in program order across it.
            atomicMemoryFence(ordering: .acquiringAndReleasing)
        } else {
            atomicMemoryFence(ordering: .sequentiallyConsistent)
        }
    }

    /// The rare side's fence, between its store and its load.
    @usableFromInline
    static func heavy() {
        if isHeavyBarrierAvailable {
            csyncstreams_heavy_barrier()
        } else {
            atomicMemoryFence(ordering: .sequentiallyConsistent)
        }
    }
}
