#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster, then stops and removes the cluster.
#
#   scripts/with-postgres.sh COMMAND [ARGS...]
#
# - Installs PostgreSQL with apt-get when its server programs are missing (Debian's `postgresql`).
# - Creates a cluster with initdb in a new temporary directory (trust authentication, superuser `sync`),
#   listening on a free port on 127.0.0.1 only, its unix socket in the same directory, and a database
#   `sync_test`.
# - Runs COMMAND with these variables set:
#     SYNC_TEST_DATABASE_URL   postgres://sync@127.0.0.1:PORT/sync_test
#     SYNC_TEST_PG_CTL         a program that stops, starts or restarts the cluster for tests:
#                              `$SYNC_TEST_PG_CTL stop|start|restart` (pg_ctl, fast shutdown)
# - Stops the cluster and removes the directory when COMMAND ends, fails or is interrupted, and exits
#   with COMMAND's status.
#
# initdb and postgres refuse to run as root: as root, they run as the `postgres` user (created by the
# package) with the directory handed to it.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 64
fi

find_bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$found" ] && [ -x "$found/initdb" ]; then echo "$found"; return; fi
    if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
}

PG_BIN=$(find_bin)
if [ -z "$PG_BIN" ]; then
    "$(cd "$(dirname "$0")/../../.." && pwd)/scripts/apt-install.sh" with-postgres postgresql
    PG_BIN=$(find_bin)
    if [ -z "$PG_BIN" ]; then
        echo "with-postgres: no initdb after installing postgresql" >&2
        exit 1
    fi
fi

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/sync-postgres.XXXXXX")
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$ROOT"
    chmod 755 "$ROOT"
    as_owner() { runuser -u postgres -- "$@"; }
else
    as_owner() { "$@"; }
fi

cleanup() {
    local status=$?
    if [ -f "$ROOT/data/postmaster.pid" ]; then
        as_owner "$PG_BIN/pg_ctl" -D "$ROOT/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$ROOT"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_owner mkdir -p "$ROOT/socket"
as_owner "$PG_BIN/initdb" -D "$ROOT/data" -U sync --auth=trust -E UTF8 --no-locale >"$ROOT/initdb.log" 2>&1 || {
    cat "$ROOT/initdb.log" >&2
    exit 1
}
cat >>"$ROOT/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$ROOT/socket'
max_connections = 200
CONF
# PostgreSQL cannot listen on port 0 and report the port, so a free port is picked by the kernel and
# released; another process may take it before PostgreSQL binds it. Then PostgreSQL fails with "Address
# already in use" and the start is retried on a new port (the last `port =` line of the file wins).
for attempt in 1 2 3 4 5; do
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    echo "port = $PORT" | as_owner tee -a "$ROOT/data/postgresql.conf" >/dev/null
    if as_owner "$PG_BIN/pg_ctl" -D "$ROOT/data" -l "$ROOT/server.log" -w -t 60 start >/dev/null; then
        break
    fi
    if [ "$attempt" = 5 ] || ! grep -q "already in use" "$ROOT/server.log"; then
        cat "$ROOT/server.log" >&2
        exit 1
    fi
    echo "with-postgres.sh: port $PORT was taken before PostgreSQL bound it; trying another" >&2
done
"$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U sync -d postgres -c 'CREATE DATABASE sync_test' >/dev/null

cat >"$ROOT/pg-ctl" <<CTL
#!/usr/bin/env bash
# Stops, starts or restarts the throwaway cluster: pg-ctl stop|start|restart (fast shutdown: open
# connections are closed).
set -euo pipefail
case "\${1:-}" in stop|start|restart) ;; *) echo "usage: \$0 stop|start|restart" >&2; exit 64 ;; esac
$(declare -f as_owner)
as_owner "$PG_BIN/pg_ctl" -D "$ROOT/data" -l "$ROOT/server.log" -m fast -w -t 60 "\$1" >/dev/null
CTL
chmod 755 "$ROOT/pg-ctl"

export SYNC_TEST_DATABASE_URL="postgres://sync@127.0.0.1:$PORT/sync_test"
export SYNC_TEST_PG_CTL="$ROOT/pg-ctl"
echo "with-postgres: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT ($ROOT)" >&2

set +e
"$@"
status=$?
set -e
exit "$status"
