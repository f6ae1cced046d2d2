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
/// and load (`light()`: a compiler-only barrier, a sequentially consistent *signal* fence from the C shim,
/// which emits no instruction). Formally: the barrier the kernel makes each other running thread execute
/// splits that thread's instruction stream at the point where it was interrupted; if its load came before
/// that point in program order, so did its store (the compiler barrier keeps program order), and the full
/// barrier makes the store visible before `heavy()` returns, so the rare side's load sees it; if its load
/// came after that point, the full barrier orders it after the rare side's store. (A thread not running
/// passes through the scheduler, which implies a full barrier.) Nothing in this depends on the processor's
/// memory model — the full barrier is the architecture's own — so it holds on arm64 as on x86-64.
///
/// Where the heavy barrier is unavailable (other systems, or a kernel or sandbox without `membarrier`),
/// both sides use a sequentially consistent fence: correct everywhere, slower on the frequent side. The
/// choice is made once per process; a `membarrier` that fails after a successful registration aborts
/// with a message (see `csyncstreams_heavy_barrier`).
@usableFromInline
enum AsymmetricFence {
    /// Whether `heavy()` is Linux's expedited `membarrier` (decided once per process, before the first
    /// use of either side).
    @usableFromInline
    static let isHeavyBarrierAvailable: Bool = {
        #if os(Linux)
            // Every architecture: the guarantee is the kernel's (see the type's documentation).
            return csyncstreams_heavy_barrier_prepare() != 0
        #else
            return false
        #endif
    }()

    /// The frequent side's fence, between its store and its load. `heavyBarrierAvailable` is
    /// `isHeavyBarrierAvailable`, read once by the caller and kept (reading the global itself costs a
    /// call to its lazy initializer's check on every use).
    @inlinable @inline(__always)
    static func light(heavyBarrierAvailable: Bool) {
        if _fastPath(heavyBarrierAvailable) {
            // A compiler-only store→load barrier (no instruction): the heavy side supplies the processor's.
            csyncstreams_compiler_barrier()
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
