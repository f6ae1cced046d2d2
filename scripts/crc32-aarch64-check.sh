#!/bin/bash
# Runs CSyncStorage's aarch64 CRC-32 code (the ARMv8 CRC32 instructions, Sources/CSyncStorage/crc32.c) on an
# emulated aarch64 processor and checks it against a bit-at-a-time reference (crc32-aarch64-check.c):
# cross-compiled with the toolchain's clang and linked with Debian's aarch64 gcc and libc, run with qemu-user (`-cpu max`, which has the CRC32 extension).
# Installs both with apt-get when missing (Debian/Ubuntu, as root). Usage: scripts/crc32-aarch64-check.sh [SEED]
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v aarch64-linux-gnu-gcc > /dev/null || ! command -v qemu-aarch64-static > /dev/null; then
    echo "crc32-aarch64-check: installing gcc-aarch64-linux-gnu and qemu-user-static with apt-get" >&2
    if [ "$(id -u)" -ne 0 ]; then
        echo "crc32-aarch64-check: they are missing and installing them needs root" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq > /dev/null
    apt-get install -y -qq gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static > /dev/null
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
