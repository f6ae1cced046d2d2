// Checks CSyncStorage's aarch64 CRC-32 (the ARMv8 CRC32 instructions) against a bit-at-a-time reference
// written here from the polynomial, on an emulated aarch64 (see crc32-aarch64-check.sh). Built for aarch64
// with ../Sources/CSyncStorage/crc32.c compiled in; exits 0 when every case agrees.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../Sources/CSyncStorage/include/CSyncStorage.h"

// The running value after `count` bytes, one bit at a time: the reflected polynomial 0xEDB88320.
static uint32_t reference(uint32_t running, const uint8_t *bytes, size_t count) {
    for (size_t index = 0; index < count; index++) {
        running ^= bytes[index];
        for (int bit = 0; bit < 8; bit++) running = (running >> 1) ^ (0xEDB88320u & (0u - (running & 1u)));
    }
    return running;
}

static uint64_t state;
static uint64_t next(void) {  // xorshift64*
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 20261126;
    state = seed;
    printf("seed %llu\n", (unsigned long long)seed);
    if (!csyncstorage_crc32_arm_available()) {
        printf("FAIL: the CRC32 instructions are not reported (HWCAP_CRC32)\n");
        return 1;
    }
    const char *check = "123456789";
    uint32_t value = csyncstorage_crc32_arm_update(0xFFFFFFFFu, check, 9) ^ 0xFFFFFFFFu;
    if (value != 0xCBF43926u) {
        printf("FAIL: CRC-32 of 123456789 is %08x, not cbf43926\n", value);
        return 1;
    }
    enum { size = 70000 };
    uint8_t *buffer = malloc(size);
    for (size_t index = 0; index < size; index++) buffer[index] = (uint8_t)next();
    long cases = 0;
    // Every length 0…1024 at 16 alignments, from the start value and from a random running value.
    for (size_t alignment = 0; alignment < 16; alignment++) {
        for (size_t length = 0; length <= 1024; length++) {
            uint32_t starts[2] = {0xFFFFFFFFu, (uint32_t)next()};
            for (int which = 0; which < 2; which++) {
                uint32_t got = csyncstorage_crc32_arm_update(starts[which], buffer + alignment, length);
                uint32_t want = reference(starts[which], buffer + alignment, length);
                cases++;
                if (got != want) {
                    printf("FAIL: length %zu at alignment %zu from %08x: %08x, not %08x\n", length, alignment,
                        starts[which], got, want);
                    return 1;
                }
            }
        }
    }
    // Long buffers fed in random pieces equal one pass of the reference.
    for (int round = 0; round < 20; round++) {
        size_t length = (size_t)(next() % (size - 16));
        uint32_t running = 0xFFFFFFFFu;
        size_t offset = 0;
        while (offset < length) {
            size_t piece = (size_t)(next() % 5000);
            if (piece > length - offset) piece = length - offset;
            running = csyncstorage_crc32_arm_update(running, buffer + offset, piece);
            offset += piece;
        }
        cases++;
        if (running != reference(0xFFFFFFFFu, buffer, length)) {
            printf("FAIL: %zu bytes in pieces\n", length);
            return 1;
        }
    }
    printf("ok: %ld cases agree with the bit-at-a-time reference; CRC-32(\"123456789\") = %08x\n", cases, value);
    free(buffer);
    return 0;
}
