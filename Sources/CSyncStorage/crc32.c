#include "CSyncStorage.h"

#include <string.h>

// ---------------------------------------------------------------------------------------------------------
// x86_64: folding with carry-less multiplication.
//
// Representation. 16 message bytes loaded little-endian into a 128-bit register: bit j of the register
// (byte j / 8, bit j % 8) is the coefficient of x^(127 − j) of the block's polynomial (a reflected CRC takes
// each byte's bit 0 first, as the highest power). The register's low 64-bit half L holds the high powers:
// R = L·x^64 + H, each half read the same way (bit i of a half is x^(63 − i)).
//
// Carry-less multiplication of two such halves a and b puts bit i + j of the 128-bit product at a_i·b_j, so
// the product register reads as x·a(x)·b(x) (bit k is x^(127 − k) and (63 − i) + (63 − j) = 126 − k).
//
// Folding. The message is R·x^s + (the rest); the block D bits after R is multiplied by x^(s − D). Since
// R·x^D = L·x^(64+D) + H·x^D ≡ L·c1 + H·c2 (mod P) with c1 = x^(D+64) mod P and c2 = x^D mod P, R can be
// replaced by L·c1 ⊕ H·c2 (degree < 96) XORed into the block D bits on, without changing the CRC. With the
// x of the product, the constants stored are x^(D+63) mod P and x^(D−1) mod P (degree < 32, in the high
// half of a 64-bit lane: power d at bit 63 − d). D = 512 folds each of four registers onto the block 64
// bytes on (four independent chains keep the multiplier busy), D = 128 folds one register onto the next.
//
// The constants (computed from P = x^32 + x^26 + x^23 + x^22 + x^16 + x^12 + x^11 + x^10 + x^8 + x^7 + x^5
// + x^4 + x^2 + x + 1 by squaring and reducing; the tests check every length against the table code):
//   D = 512: x^575 mod P → 0x653D982200000000, x^511 mod P → 0xCAD38E8F00000000
//   D = 128: x^191 mod P → 0x65673B4600000000, x^127 mod P → 0x9BA54C6F00000000
//
// What is left is one register F ≡ the consumed bytes (with the starting running value XORed into their
// first 32 bits, which is how the table code's running value enters the polynomial). The running value is
// F·x^32 mod P, which is the table code's update of F's 16 bytes from 0: the caller does that, and the tail.
// ---------------------------------------------------------------------------------------------------------
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int csyncstorage_crc32_fold_available(void) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) { return 0; }
    return (ecx & bit_PCLMUL) != 0 && (ecx & bit_SSE4_1) != 0;
}

__attribute__((target("pclmul,sse4.1"))) static inline __m128i csyncstorage_fold16(__m128i value, __m128i constants) {
    return _mm_xor_si128(_mm_clmulepi64_si128(value, constants, 0x00), _mm_clmulepi64_si128(value, constants, 0x11));
}

__attribute__((target("pclmul,sse4.1"))) size_t csyncstorage_crc32_fold(
    uint32_t running, const void *bytes, size_t count, void *folded) {
    if (count < 64) { return 0; }
    const uint8_t *cursor = (const uint8_t *)bytes;
    const uint8_t *const end = cursor + (count & ~(size_t)15);
    // _mm_set_epi64x takes the high half first: low half × L (0x00), high half × H (0x11).
    const __m128i by512 = _mm_set_epi64x((long long)0xCAD38E8F00000000ULL, (long long)0x653D982200000000ULL);
    const __m128i by128 = _mm_set_epi64x((long long)0x9BA54C6F00000000ULL, (long long)0x65673B4600000000ULL);

    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)cursor), _mm_cvtsi32_si128((int)running));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(cursor + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(cursor + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(cursor + 48));
    cursor += 64;
    while (end - cursor >= 64) {
        x0 = _mm_xor_si128(csyncstorage_fold16(x0, by512), _mm_loadu_si128((const __m128i *)cursor));
        x1 = _mm_xor_si128(csyncstorage_fold16(x1, by512), _mm_loadu_si128((const __m128i *)(cursor + 16)));
        x2 = _mm_xor_si128(csyncstorage_fold16(x2, by512), _mm_loadu_si128((const __m128i *)(cursor + 32)));
        x3 = _mm_xor_si128(csyncstorage_fold16(x3, by512), _mm_loadu_si128((const __m128i *)(cursor + 48)));
        cursor += 64;
    }
    __m128i x = _mm_xor_si128(csyncstorage_fold16(x0, by128), x1);
    x = _mm_xor_si128(csyncstorage_fold16(x, by128), x2);
    x = _mm_xor_si128(csyncstorage_fold16(x, by128), x3);
    while (cursor < end) {
        x = _mm_xor_si128(csyncstorage_fold16(x, by128), _mm_loadu_si128((const __m128i *)cursor));
        cursor += 16;
    }
    _mm_storeu_si128((__m128i *)folded, x);
    return (size_t)(cursor - (const uint8_t *)bytes);
}
#else
int csyncstorage_crc32_fold_available(void) { return 0; }

size_t csyncstorage_crc32_fold(uint32_t running, const void *bytes, size_t count, void *folded) {
    (void)running;
    (void)bytes;
    (void)count;
    (void)folded;
    return 0;
}
#endif

// ---------------------------------------------------------------------------------------------------------
// aarch64: the ARMv8 CRC32 instructions. CRC32B/H/W/X (without C) are the IEEE polynomial, reflected, on the
// running value as is: exactly the table code's step, 8 bytes at a time.
// ---------------------------------------------------------------------------------------------------------
#if defined(__aarch64__)
#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

int csyncstorage_crc32_arm_available(void) {
#if defined(__APPLE__)
    return 1;  // every Apple arm64 processor has the CRC32 instructions (ARMv8.1 and later make them mandatory)
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
    return 0;
#endif
}

__attribute__((target("crc"))) uint32_t csyncstorage_crc32_arm_update(
    uint32_t running, const void *bytes, size_t count) {
    const uint8_t *cursor = (const uint8_t *)bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, cursor, 8);  // little-endian: the first byte is the low one, as the instruction takes it
        running = __crc32d(running, word);
        cursor += 8;
        count -= 8;
    }
    while (count > 0) {
        running = __crc32b(running, *cursor);
        cursor += 1;
        count -= 1;
    }
    return running;
}
#else
int csyncstorage_crc32_arm_available(void) { return 0; }

uint32_t csyncstorage_crc32_arm_update(uint32_t running, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return running;
}
#endif
