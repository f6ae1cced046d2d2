// CRC-32 (IEEE 802.3, the reflected polynomial 0xEDB88320) in the processor's own instructions, for
// SyncStorage's `CRC32`: carry-less multiplication (PCLMULQDQ) on x86_64, the ARMv8 CRC32 instructions on
// aarch64. Both compute the same checksum as the table-driven code in CRC32.swift, which stays the fallback
// (and the reference the tests compare with). Every function works on a *running* value (the table code's
// state: start 0xFFFFFFFF, final XOR by the caller), never on a finished checksum.
#ifndef CSYNCSTORAGE_H
#define CSYNCSTORAGE_H

#include <stddef.h>
#include <stdint.h>

/// 1 when this processor has PCLMULQDQ and SSE 4.1 (x86_64 only; checked with `cpuid` on every call, so a
/// caller keeps the answer), else 0.
int csyncstorage_crc32_fold_available(void);

/// Folds the first `count` rounded down to a multiple of 16 bytes of `bytes` (at least 64; none when
/// `count` < 64 or the processor lacks PCLMULQDQ) into 16 bytes written to `folded`, and returns how many
/// bytes it consumed (0 or a multiple of 16 ≥ 64). The running value over the consumed bytes, starting from
/// `running`, is then the table update of the 16 `folded` bytes from 0 (`folded` ≡ the consumed bytes, with
/// `running` XORed into their first four, modulo the polynomial); the caller continues with the rest.
size_t csyncstorage_crc32_fold(uint32_t running, const void *bytes, size_t count, void *folded);

/// 1 when this processor has the ARMv8 CRC32 instructions (aarch64 only), else 0.
int csyncstorage_crc32_arm_available(void);

/// The running value after feeding the `count` bytes at `bytes` into `running` with the ARMv8 CRC32
/// instructions; only when `csyncstorage_crc32_arm_available()` (returns `running` unchanged elsewhere).
uint32_t csyncstorage_crc32_arm_update(uint32_t running, const void *bytes, size_t count);

#endif
