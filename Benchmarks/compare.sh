#!/usr/bin/env bash
# Builds the `compare` executable in release and prints one table: per scenario, SyncStreams ns/op, each
# peer's ns/op, peer ÷ SyncStreams, SyncStreams ÷ floor, the target and whether it is met.
# Extra arguments go to `compare` (e.g. `./compare.sh --filter P1`, `./compare.sh --scale 0.1`).
# For allocation counts and peak memory use package-benchmark: `swift package benchmark`.
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --product compare >&2
exec "$(swift build -c release --show-bin-path)/compare" "$@"
