#!/usr/bin/env bash
# sync-server beside sync-server-nio on loopback, in one run (issue 25 item 4; docs/PERFORMANCE.md,
# "sync-server beside sync-server-nio"): P8n, P11, P12 and WebSocket ping → pong at 512 and 4,096
# connections, each on a fresh server process with a durable file store; prints one Markdown table.
# Both servers come from one release build of Integrations/SyncNIO (which builds the root package's
# sync-server too, from the same sources with the same flags); the clients are the root package's.
# Extra arguments go to `network side-by-side` (e.g. `--sessions 1000 --echo-seconds 2`).
set -euo pipefail
cd "$(dirname "$0")"
(cd ../Integrations/SyncNIO && swift build -c release --product sync-server-nio >&2 \
    && swift build -c release --product sync-server >&2)
servers="$(cd ../Integrations/SyncNIO && swift build -c release --show-bin-path)"
swift build -c release --product network >&2
exec "$(swift build -c release --show-bin-path)/network" side-by-side \
    --root-server "$servers/sync-server" --nio-server "$servers/sync-server-nio" "$@"
