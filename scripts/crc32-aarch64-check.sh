#!/bin/bash
# Runs CSyncStorage's aarch64 CRC-32 code (the ARMv8 CRC32 instructions, Sources/CSyncStorage/crc32.c) on an
# emulated aarch64 processor and checks it against a bit-at-a-time reference (crc32-aarch64-check.c):
# cross-compiled with the toolchain's clang and linked with Debian's aarch64 gcc and libc, run with qemu-user (`-cpu max`, which has the CRC32 extension).
# Installs both with apt-get when missing (Debian/Ubuntu, as root). Usage: scripts/crc32-aarch64-check.sh [SEED]
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v aarch64-linux-gnu-gcc > /dev/null || ! command -v qemu-aarch64-static > /dev/null; then
    ./apt-install.sh crc32-aarch64-check gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Compiled by the toolchain's clang, as SwiftPM compiles the C target; linked with Debian's aarch64 libc.
for source in crc32-aarch64-check.c ../Sources/CSyncStorage/crc32.c; do
    clang --target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include -O2 -Wall -Werror \
        -I ../Sources/CSyncStorage/include -c "$source" -o "$work/$(basename "$source" .c).o"
done
aarch64-linux-gnu-gcc -static -o "$work/check" "$work/crc32-aarch64-check.o" "$work/crc32.o"
qemu-aarch64-static -cpu max "$work/check" "${1:-20261126}"
