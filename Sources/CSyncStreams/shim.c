#include "CSyncStreams.h"

_Thread_local uint32_t csyncstreams_callback_depth CSYNCSTREAMS_TLS_MODEL = 0;
_Thread_local uint64_t csyncstreams_thread_serial CSYNCSTREAMS_TLS_MODEL = 0;

#include <stdatomic.h>

// 0 and 1 are never a thread's serial (callers use them as "none" and "nobody").
static _Atomic uint64_t csyncstreams_next_thread_serial = 2;

uint64_t csyncstreams_thread_serial_assign(void) {
    uint64_t serial = atomic_fetch_add_explicit(&csyncstreams_next_thread_serial, 1, memory_order_relaxed);
    csyncstreams_thread_serial = serial;
    return serial;
}

#if defined(__linux__)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

void csyncstreams_wait_on_address(const void *address, uint32_t expected) {
    // FUTEX_WAIT compares the word and sleeps atomically with respect to FUTEX_WAKE on the same word.
    syscall(SYS_futex, address, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void csyncstreams_wake_address(const void *address, int all) {
    syscall(SYS_futex, address, FUTEX_WAKE_PRIVATE, all ? INT_MAX : 1, NULL, NULL, 0);
}

int csyncstreams_heavy_barrier_prepare(void) {
    long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return 0;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1 : 0;
}

void csyncstreams_heavy_barrier(void) {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        // Ignoring the failure would let an invalidate() return while its callback runs, or a lock
        // waiter sleep for ever: the other side counted on this barrier.
        int error = errno;
        fprintf(stderr, "SyncStreams: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after a successful "
                        "registration (errno %d); aborting, because the memory ordering it provides is "
                        "required.\n", error);
        abort();
    }
}

#elif defined(__APPLE__)
#include <os/os_sync_wait_on_address.h>

void csyncstreams_wait_on_address(const void *address, uint32_t expected) {
    os_sync_wait_on_address((void *)address, expected, sizeof(uint32_t), OS_SYNC_WAIT_ON_ADDRESS_NONE);
}

void csyncstreams_wake_address(const void *address, int all) {
    if (all) {
        os_sync_wake_by_address_all((void *)address, sizeof(uint32_t), OS_SYNC_WAKE_BY_ADDRESS_NONE);
    } else {
        os_sync_wake_by_address_any((void *)address, sizeof(uint32_t), OS_SYNC_WAKE_BY_ADDRESS_NONE);
    }
}

// No expedited membarrier on Darwin: callers fall back to full fences on both sides.
int csyncstreams_heavy_barrier_prepare(void) { return 0; }
void csyncstreams_heavy_barrier(void) {}

#else
#include <sched.h>

// A portable fallback: waiting is a yield (callers loop), waking is a no-op.
void csyncstreams_wait_on_address(const void *address, uint32_t expected) {
    (void)address;
    (void)expected;
    sched_yield();
}
void csyncstreams_wake_address(const void *address, int all) {
    (void)address;
    (void)all;
}
int csyncstreams_heavy_barrier_prepare(void) { return 0; }
void csyncstreams_heavy_barrier(void) {}
#endif
