#!/usr/bin/env bash
# Builds the DocC documentation of SyncStreams and SyncEngine (and SyncTesting) with the toolchain's own
# docc: `swift package dump-symbol-graph`, then `docc convert` of each module's catalog with its symbol
# graphs. Warnings (a broken symbol link in a doc comment or an article, an unknown article) are errors,
# and so is a guide that no longer matches the docs/ page it mirrors (scripts/docc-articles.py).
#
#   scripts/build-docs.sh [OUTPUT_DIR]     # default .build/docs; one MODULE.doccarchive per module
#
# No package dependency (no swift-docc-plugin): docc ships with the Swift toolchain beside `swift`.
set -euo pipefail
cd "$(dirname "$0")/.."

output="${1:-.build/docs}"

# The guides that mirror docs/*.md must match them (scripts/docc-articles.py --write updates them).
python3 scripts/docc-articles.py
swift_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
docc="${DOCC:-$swift_bin/docc}"
if [ ! -x "$docc" ]; then
    docc="$(command -v docc || true)"
fi
if [ -z "$docc" ] || [ ! -x "$docc" ]; then
    echo "error: docc not found beside swift ($swift_bin) or on PATH; set DOCC" >&2
    exit 1
fi

# The symbol graphs of every module (public symbols), into the build directory; its output names the
# directory. It builds the package first, with the same flags as CI's build (warnings are errors), so
# after that build it only emits the graphs.
dump_log="$(mktemp)"
trap 'rm -f "$dump_log"' EXIT
if ! swift package -Xswiftc -warnings-as-errors dump-symbol-graph --skip-synthesized-members >"$dump_log" 2>&1; then
    cat "$dump_log"
    echo "error: swift package dump-symbol-graph failed" >&2
    exit 1
fi
tail -n 3 "$dump_log"
graphs="$(sed -n 's/^Files written to //p' "$dump_log" | tail -n 1)"
if [ -z "$graphs" ] || [ ! -d "$graphs" ]; then
    echo "error: could not find the symbol graph directory in the output of dump-symbol-graph" >&2
    exit 1
fi

# docc's --warnings-as-errors when it has the flag; and in any case a "warning:" line fails the build.
strict=()
help="$("$docc" convert --help 2>&1 || true)"
if grep -q -- '--warnings-as-errors' <<<"$help"; then strict=(--warnings-as-errors); fi

mkdir -p "$output"
status=0
for module in SyncStreams SyncEngine SyncTesting; do
    catalog="Sources/$module/$module.docc"
    [ -d "$catalog" ] || continue
    # Only this module's graphs (MODULE.symbols.json and its extension graphs MODULE@Other.symbols.json).
    module_graphs="$(mktemp -d)"
    cp "$graphs/$module.symbols.json" "$module_graphs/"
    for extension in "$graphs/$module@"*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$module_graphs/"
    done
    log="$(mktemp)"
    echo "==> docc convert $catalog"
    if ! "$docc" convert "$catalog" \
        --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.syncstreams.$module" \
        --output-path "$output/$module.doccarchive" "${strict[@]}" >"$log" 2>&1; then
        status=1
    fi
    cat "$log"
    if grep -q "warning:" "$log"; then
        echo "error: docc reported warnings for $module (warnings are errors)" >&2
        status=1
    fi
    rm -rf "$module_graphs" "$log"
done
if [ "$status" -ne 0 ]; then
    echo "error: the documentation build failed" >&2
    exit 1
fi
echo "Documentation archives in $output"
