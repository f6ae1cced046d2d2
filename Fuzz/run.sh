#!/usr/bin/env bash
# Builds each libFuzzer target (swiftc -sanitize=fuzzer,address: the target file with its
# @_cdecl("LLVMFuzzerTestOneInput") compiled together with the module sources it exercises) and runs it
# for a bounded time on its corpus in Fuzz/Corpus/<target>. New inputs found go to a scratch corpus
# (Fuzz/.work, not kept); a crash stops the run and leaves crash-* in Fuzz/.work/<target>: copy it into
# Fuzz/Corpus/<target>/ and add it to Tests (FuzzCorpusTests replays every corpus file under swift test).
#
#   Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      default: 60 seconds, every target
#   Fuzz/run.sh --build-only
#
# Targets: frame-decoder handshake wire-codec api-keys record-log-scan
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
build_only=false
if [ "${1:-}" = "--build-only" ]; then build_only=true; shift; elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then seconds=$1; shift; fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frame-decoder handshake wire-codec api-keys record-log-scan)

work=Fuzz/.work
mkdir -p "$work/bin"
ws=Sources/SyncNetwork/WebSocket

sources() {
    case "$1" in
    frame-decoder)
        echo Fuzz/Targets/FuzzFrameDecoder.swift $ws/WebSocketFrameDecoder.swift $ws/WebSocketFrame.swift \
            $ws/WebSocketFrameHeader.swift $ws/WebSocketPartialFrame.swift \
            $ws/WebSocketMessageAssembler.swift $ws/WebSocketOpcode.swift $ws/WebSocketViolation.swift \
            $ws/WebSocketCloseCode.swift $ws/WebSocketMask.swift ;;
    handshake)
        echo Fuzz/Targets/FuzzHandshake.swift $ws/WebSocketHandshake.swift $ws/WebSocketOriginPolicy.swift \
            $ws/Base64.swift $ws/SHA1.swift ;;
    wire-codec)
        echo Fuzz/Targets/FuzzWireCodec.swift Sources/SyncWire/Codec/*.swift Sources/SyncWire/Messages/*.swift ;;
    api-keys)
        echo Fuzz/Targets/FuzzAPIKeys.swift Sources/SyncServer/APIKeysFile.swift ;;
    record-log-scan)
        # SyncStorage with SyncStreams' lock compiled into the same module (its `import SyncStreams`
        # removed from a scratch copy).
        rm -rf "$work/src/SyncStorage" && mkdir -p "$work/src/SyncStorage"
        for file in $(ls Sources/SyncStorage/*.swift | grep -v BlockingQueue.swift); do
            grep -v '^import SyncStreams$' "$file" > "$work/src/SyncStorage/$(basename "$file")"
        done
        echo Fuzz/Targets/FuzzRecordLogScan.swift Sources/SyncStreams/Internal/Lock.swift "$work"/src/SyncStorage/*.swift ;;
    *) echo "unknown target $1" >&2; return 1 ;;
    esac
}

for target in "${targets[@]}"; do
    echo "==> build $target"
    # shellcheck disable=SC2046
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -package-name SyncStreamsFuzz -module-name "Fuzz_${target//-/_}" \
        $(sources "$target") -o "$work/bin/$target" 2> >(grep -v 'ld.gold: warning: Cannot export local symbol' >&2)
done
$build_only && exit 0

for target in "${targets[@]}"; do
    corpus="Fuzz/Corpus/$target"
    scratch="$work/$target"
    mkdir -p "$corpus" "$scratch/corpus"
    echo "==> run $target for ${seconds}s (corpus: $(ls "$corpus" | wc -l) files)"
    (cd "$scratch" && "../bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 corpus "../../../$corpus" 2>&1 | grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units|ERROR|SUMMARY|crash-|Test unit written' || true)
    rm -f /dev/shm/syncstreams-fuzz-recordlog-*.log /tmp/syncstreams-fuzz-recordlog-*.log  # the target's scratch log
    if ls "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* "$scratch"/oom-* >/dev/null 2>&1; then
        echo "!! $target found a failing input: $(ls "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* "$scratch"/oom-* 2>/dev/null)"
        exit 1
    fi
done
echo "==> fuzzing passed: ${#targets[@]} targets, ${seconds}s each"
