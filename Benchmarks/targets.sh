#!/usr/bin/env bash
# Issue 26's targets in one run, on one machine (docs/PERFORMANCE.md, "Issue 26's targets in one run"):
# builds `compare` and `network` in release once, then runs, one after the other,
#   compare --id P1 --id P5 --id "P8 64 in flight" --id "P8n durable"   (P1, P5, P8 embedded + the disk's
#                                                                          batched fsync baseline, P8n durable)
#     --id "P8 64 in flight window" --id "P8n durable window"             (the same two syncs timed from the first
#                                                                          write to the reader's last changeset, and
#                                                                          the disk alone writing 2 and 3 files at
#                                                                          once: the ratio's ceiling on this disk)
#   network p12 [samples]                                                 (P12: write → another app)
#   network p13 [MiB]                                                     (P13: RSS while syncing 1 GiB)
# and prints one Markdown table (target, figures, ratio, met/missed) under a header line with the date,
# nproc, kernel, Swift version and the load average before and after. The raw output goes to stderr.
# Options: --quick (smoke run: compare at --scale 0.05 with 1–3 repetitions, 50 P12 samples, P13 at 64 MiB),
# --scale X (compare's scale), --p12-samples N, --p13-mib N.
set -euo pipefail
cd "$(dirname "$0")"

scale=1
compare_extra=()
p12_samples=300
p13_mib=1024
while [ $# -gt 0 ]; do
    case "$1" in
        --quick)
            scale=0.05
            compare_extra=(--budget 0.5 --min-repetitions 1 --max-repetitions 3)
            p12_samples=50
            p13_mib=64
            ;;
        --scale) scale="$2"; shift ;;
        --p12-samples) p12_samples="$2"; shift ;;
        --p13-mib) p13_mib="$2"; shift ;;
        *)
            echo "usage: targets.sh [--quick] [--scale X] [--p12-samples N] [--p13-mib N]" >&2
            exit 2
            ;;
    esac
    shift
done

swift build -c release --product compare >&2
swift build -c release --product network >&2
bin="$(swift build -c release --show-bin-path)"

raw="$(mktemp -d)"
trap 'rm -rf "$raw"' EXIT
load() { sed -e 's/.*load average: //' <<<"$(uptime)"; }

load_before="$(load)"
started="$(date -u '+%Y-%m-%d %H:%M UTC')"
# A measurement that fails leaves its rows as "no figure"; the others still run.
"$bin/compare" --id P1 --id P5 --id "P8 64 in flight" --id "P8n durable" --id "P8 64 in flight window" \
    --id "P8n durable window" --scale "$scale" \
    ${compare_extra[@]+"${compare_extra[@]}"} | tee "$raw/compare" >&2 || echo "compare failed: $?" >&2
"$bin/network" p12 "$p12_samples" | tee "$raw/p12" >&2 || echo "network p12 failed: $?" >&2
"$bin/network" p13 "$p13_mib" | tee "$raw/p13" >&2 || echo "network p13 failed: $?" >&2
load_after="$(load)"

# The median compare printed for scenario $1 and library $2 ("  ID LIBRARY: 1.23 ns/unit (median …").
median() {
    awk -v p="  $1 $2: " 'index($0, p) == 1 { split(substr($0, length(p) + 1), f, " "); print f[1]; exit }' \
        "$raw/compare"
}
# The word after the first occurrence of $2 in file $1.
after() { awk -v p="$2" 'index($0, p) { split(substr($0, index($0, p) + length(p)), f, " "); print f[1]; exit }' "$1"; }
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
verdict() { if awk "BEGIN { exit !($1) }"; then echo met; else echo "**missed**"; fi; }
row() { echo "| $1 | $2 | $3 | $4 |"; }
missing() { row "$1" "no figure (see the raw output)" "—" "—"; }

echo "Issue 26's targets in one run — $started; nproc $(nproc); $(uname -sr); $(swift --version 2>&1 | head -1);" \
    "load average (1, 5, 15 min) before $load_before, after $load_after;" \
    "compare --scale $scale, P12 $p12_samples samples, P13 $p13_mib MiB"
echo
row "target" "figure(s), same run" "ratio" "result"
row "---" "---" "---" "---"

ss="$(median P1 SyncStreams)" floor="$(median P1 floor)"
if [ -n "$ss" ] && [ -n "$floor" ]; then
    r="$(calc "$ss / $floor")"
    row "P1 ≤ 2 × the direct-closure floor" "SyncStreams $ss ns/value, floor $floor ns/value" "$r×" "$(verdict "$r <= 2")"
else missing "P1 ≤ 2 × the direct-closure floor"; fi

ss="$(median P5 SyncStreams)" oc="$(median P5 OpenCombine)"
if [ -n "$ss" ] && [ -n "$oc" ]; then
    r="$(calc "$oc / $ss")"
    row "P5 ≥ 10 × OpenCombine" "SyncStreams $ss ns/value, OpenCombine $oc ns/value" "$r×" "$(verdict "$r >= 10")"
else missing "P5 ≥ 10 × OpenCombine"; fi

p8="$(median "P8 64 in flight" SyncStreams)" disk="$(median "P8 64 in flight" "disk: 64 × 64 KiB, one fsync")"
if [ -n "$p8" ] && [ -n "$disk" ]; then
    r="$(calc "2 * $disk / $p8")"
    row "P8 64 in flight (embedded), two durable copies ≥ 0.5 × the disk's batched durable bandwidth" \
        "$(calc "$p8 / 1e6") ms per MB = $(calc "1e9 / $p8") MB/s; disk 64 × 64 KiB + one fsync $(calc "$disk / 1e6") ms per MB" \
        "2 × $(calc "$disk / 1e6") / $(calc "$p8 / 1e6") = $r" "$(verdict "$r >= 0.5")"
else missing "P8 64 in flight ≥ 0.5 × the disk's batched durable bandwidth"; fi

p8n="$(median "P8n durable" SyncStreams)"
if [ -n "$p8" ] && [ -n "$p8n" ]; then
    r="$(calc "$p8 / $p8n")"
    row "P8n durable (server file store, loopback WebSocket) ≥ 0.8 × embedded P8 64 in flight" \
        "$(calc "$p8n / 1e6") ms per MB; embedded $(calc "$p8 / 1e6") ms per MB" "$r" "$(verdict "$r >= 0.8")"
else missing "P8n durable ≥ 0.8 × embedded"; fi

p8w="$(median "P8 64 in flight window" SyncStreams)" p8nw="$(median "P8n durable window" SyncStreams)"
if [ -n "$p8w" ] && [ -n "$p8nw" ]; then
    r="$(calc "$p8w / $p8nw")"
    row "the same, the sync alone (first write → the reader holds the last changeset; no set-up or clean-up)" \
        "$(calc "$p8nw / 1e6") ms per MB; embedded $(calc "$p8w / 1e6") ms per MB" "$r" "$(verdict "$r >= 0.8")"
else missing "P8n durable ≥ 0.8 × embedded, the sync alone"; fi

# What the disk alone allows that ratio: the embedded path writes each changeset to 2 files at once (writer
# and reader stores), the durable network path to 3 (writer, server, reader): the same 64 × 64 KiB + fsync
# pattern to 2 and to 3 files at once, one thread each, in the same run.
disk2="$(median "P8 64 in flight window" "disk: 2 files at once, each 64 × 64 KiB + fsync")"
disk3="$(median "P8n durable window" "disk: 3 files at once, each 64 × 64 KiB + fsync")"
if [ -n "$disk2" ] && [ -n "$disk3" ] && [ -n "$p8w" ] && [ -n "$p8nw" ]; then
    ceiling="$(calc "$disk2 / $disk3")"
    row "(context, not a target) the most the disk alone allows that ratio: 2 files at once ÷ 3 files at once; each path's sync against its own disk figure" \
        "disk 2 files $(calc "$disk2 / 1e6") ms per MB, 3 files $(calc "$disk3 / 1e6") ms per MB; embedded at $(calc "$disk2 / $p8w") of its disk figure, durable network at $(calc "$disk3 / $p8nw")" \
        "$ceiling" "—"
else missing "the disk's ceiling for durable network ÷ embedded"; fi

sync_p50="$(sed -n 's/.*other app: *p50 \([0-9.]*\) ms.*/\1/p' "$raw/p12")"
disk_p50="$(sed -n 's/.*write+fsync: *p50 \([0-9.]*\) ms.*/\1/p' "$raw/p12")"
per_copy="$(after "$raw/p12" "(3 on the path):")"
r="$(after "$raw/p12" "ms = ")"
if [ -n "$r" ]; then
    row "P12 write → another app (1 KiB, 100/s, loopback, server file store): p50 per durable copy ≤ 2.5 × the disk's 1 KiB fsync p50" \
        "p50 $sync_p50 ms ÷ 3 copies = $per_copy ms; disk 1 KiB write + fsync p50 $disk_p50 ms" "$r×" \
        "$(verdict "$r <= 2.5")"
else missing "P12 p50 per durable copy ≤ 2.5 × the disk's fsync p50"; fi

peak="$(after "$raw/p13" "peak")" took="$(after "$raw/p13" " MiB in")"
if [ -n "$peak" ] && grep -q "got all of them" "$raw/p13"; then
    row "P13 < 100 MB RSS syncing $p13_mib MiB (1 GiB for the target)" \
        "peak RSS $peak MiB = $(calc "$peak * 1.048576") MB; synced in $took s" "—" \
        "$(verdict "$peak * 1048576 < 100000000")"
else missing "P13 < 100 MB RSS syncing $p13_mib MiB"; fi
