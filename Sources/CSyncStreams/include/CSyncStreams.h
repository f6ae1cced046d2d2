// The few system facilities SyncStreams needs that Swift cannot reach directly: a thread-local counter
// (no Swift spelling), the futex / wait-on-address system calls (variadic `syscall` is not callable from
// Swift), and Linux's `membarrier`. Every function is small; the thread-local ones are inline.
#ifndef CSYNCSTREAMS_H
#define CSYNCSTREAMS_H

#include <stdint.h>

#if defined(__ELF__)
#define CSYNCSTREAMS_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define CSYNCSTREAMS_TLS_MODEL
#endif

/// How many stream callbacks (relay drains) the current thread is inside of.
extern _Thread_local uint32_t csyncstreams_callback_depth CSYNCSTREAMS_TLS_MODEL;

static inline uint32_t csyncstreams_callback_depth_get(void) { return csyncstreams_callback_depth; }
static inline void csyncstreams_callback_depth_enter(void) { csyncstreams_callback_depth += 1; }
static inline void csyncstreams_callback_depth_leave(void) { csyncstreams_callback_depth -= 1; }

/// A number identifying the calling thread among running threads: the address of its thread-local.
static inline uintptr_t csyncstreams_current_thread(void) { return (uintptr_t)&csyncstreams_callback_depth; }

/// The calling thread's serial number: assigned on its first call, from 2 upwards, and never reused in the
/// process (unlike `csyncstreams_current_thread`, whose address a later thread may get).
extern _Thread_local uint64_t csyncstreams_thread_serial CSYNCSTREAMS_TLS_MODEL;

/// Assigns the calling thread its serial number (the slow path of `csyncstreams_thread_serial_get`).
uint64_t csyncstreams_thread_serial_assign(void);

static inline uint64_t csyncstreams_thread_serial_get(void) {
    uint64_t serial = csyncstreams_thread_serial;
    if (__builtin_expect(serial == 0, 0)) serial = csyncstreams_thread_serial_assign();
    return serial;
}

/// Tells the processor the thread is spinning (x86 `pause`, ARM `yield`).
static inline void csyncstreams_spin_hint(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/// A compiler-only store→load barrier: the compiler keeps every memory access on its side (a sequentially
/// consistent signal fence); the processor is not told anything. The light side of `AsymmetricFence`.
static inline void csyncstreams_compiler_barrier(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

/// Sleeps while the 32-bit word at `address` equals `expected` (or until woken; spurious returns are
/// allowed). Returns at once when the word differs.
void csyncstreams_wait_on_address(const void *address, uint32_t expected);

/// Wakes one (`all == 0`) or every thread sleeping on `address`.
void csyncstreams_wake_address(const void *address, int all);

/// Registers the process for the expedited private `membarrier`; returns 1 when it can be used.
int csyncstreams_heavy_barrier_prepare(void);

/// Makes every other running thread of the process execute a full memory barrier before returning
/// (Linux `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`). Only valid after a successful prepare. If the
/// kernel refuses it then (it cannot, once registered — short of a sandbox changing its mind), the process
/// aborts with a message: the frequent side has been running with compiler-only barriers, so no fallback
/// could restore the ordering they relied on.
void csyncstreams_heavy_barrier(void);

#endif
