#!/usr/bin/env bash
# Starts or stops (by pid) the server of a cluster made by
# scripts/postgres/up.sh, on the same port and data: for testing what
# happens while the database is away.
# Usage: scripts/postgres/ctl.sh BASE start|stop
set -euo pipefail
base=$(realpath -m "${1:?usage: ctl.sh BASE start|stop}")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
port=$(cat "$base/run/port")
as_owner=()
if [[ $(id -u) -eq 0 ]]; then as_owner=(runuser -u postgres --); fi
case "${2:-}" in
  start)
    setsid "${as_owner[@]}" "$bin/postgres" -D "$base/data" -p "$port" -c listen_addresses=127.0.0.1 \
      -c unix_socket_directories="$base/run" -c max_connections=200 >> "$base/log/postgres.log" 2>&1 < /dev/null &
    echo $! > "$base/run/postgres.pid"
    for _ in $(seq 1 100); do
      "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && exit 0
      sleep 0.1
    done
    echo "ctl.sh: postgres did not come up" >&2
    tail -n 20 "$base/log/postgres.log" >&2
    exit 1
    ;;
  stop) exec "$(dirname "$0")/down.sh" "$base" ;;
  *) echo "usage: ctl.sh BASE start|stop" >&2; exit 2 ;;
esac
