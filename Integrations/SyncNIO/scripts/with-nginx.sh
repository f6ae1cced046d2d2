#!/usr/bin/env bash
# Runs a command with the documented deployment up (docs/Server.md, "TLS"): the root package's
# `sync-server` on 127.0.0.1 behind a real TLS-terminating nginx, then stops both and removes their files.
#
#   scripts/with-nginx.sh COMMAND [ARGS...]
#
# - Installs nginx, openssl and curl with apt-get when missing (Debian's `nginx-light`, `openssl`, `curl`).
# - Makes a test CA and a certificate for localhost (scripts/make-test-certificates.sh).
# - Starts `sync-server --hello-timeout 300s --port 0` ($SYNC_SERVER, default: the root package's .build/debug/sync-server,
#   built with `swift build --product sync-server` when missing) and nginx as this user (no master
#   process, everything under a temporary prefix), listening with TLS on a free port of 127.0.0.1 and
#   proxying `/sync` (WebSocket upgrade headers passed on) and `/healthz` to sync-server.
# - Runs COMMAND with these variables set:
#     SYNCNIO_NGINX_URL   wss://localhost:PORT/sync
#     SYNCNIO_NGINX_CA    the PEM file of the CA that signed nginx's certificate
# - Exits with COMMAND's status.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 64
fi
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)

find_nginx() { command -v nginx || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true; }
NGINX=$(find_nginx)
if [ -z "$NGINX" ] || ! command -v openssl >/dev/null || ! command -v curl >/dev/null; then
    # policy-rc.d or not: the package's own service is not wanted running.
    "$root/scripts/apt-install.sh" with-nginx nginx-light openssl curl
    NGINX=$(find_nginx)
    [ -n "$NGINX" ] || { echo "with-nginx: no nginx after installing it" >&2; exit 1; }
fi

SERVER=${SYNC_SERVER:-$root/.build/debug/sync-server}
if [ ! -x "$SERVER" ]; then
    echo "with-nginx: building sync-server (swift build --product sync-server)" >&2
    (cd "$root" && swift build --product sync-server >/dev/null)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/syncnio-nginx.XXXXXX")
server_pid=""
nginx_pid=""
cleanup() {
    local status=$?
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for WHAT TRIES COMMAND...: runs COMMAND every 0.1 s until it succeeds, at most TRIES times.
wait_for() {
    local what=$1 tries=$2
    shift 2
    for _ in $(seq "$tries"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    echo "with-nginx: timed out waiting for $what" >&2
    return 1
}

"$here/scripts/make-test-certificates.sh" "$work/certs" >/dev/null

# A generous hello deadline: a client of a loaded test run may take longer than the default 10 s to say hello.
"$SERVER" --hello-timeout 300s --port 0 --data "$work/data" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
wait_for "sync-server's URL line" 600 grep -q "listening on ws://" "$work/server.out" \
    || { cat "$work/server.err" >&2; exit 1; }
server_port=$(sed -n 's|.*listening on ws://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server.out" | head -n 1)

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/nginx/logs"
cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    map \$http_upgrade \$connection_upgrade { default upgrade; '' close; }
    server {
        listen 127.0.0.1:$port ssl;
        server_name localhost;
        ssl_certificate $work/certs/server.pem;
        ssl_certificate_key $work/certs/server.key;
        location /sync {
            proxy_pass http://127.0.0.1:$server_port;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_set_header Host \$host;
            proxy_read_timeout 1h;
        }
        location = /healthz { proxy_pass http://127.0.0.1:$server_port; }
    }
}
CONF
"$NGINX" -p "$work/nginx/" -e "$work/nginx/logs/error.log" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
wait_for "nginx to answer /healthz over TLS" 600 \
    curl -sf --cacert "$work/certs/ca.pem" "https://localhost:$port/healthz" \
    || { cat "$work/nginx/logs/error.log" >&2; exit 1; }
echo "with-nginx: nginx on https://localhost:$port -> sync-server on ws://127.0.0.1:$server_port" >&2

export SYNCNIO_NGINX_URL="wss://localhost:$port/sync"
export SYNCNIO_NGINX_CA="$work/certs/ca.pem"
set +e
"$@"
status=$?
set -e
exit "$status"
