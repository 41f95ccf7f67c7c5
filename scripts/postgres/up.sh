#!/usr/bin/env bash
# Brings up a real PostgreSQL 15 server on 127.0.0.1 for tests and
# benchmarks: a fresh cluster (initdb) under BASE, password (SCRAM)
# authentication, loopback only, its pid in BASE/run/postgres.pid for
# scripts/postgres/down.sh. As root it runs as the `postgres` user.
#
# Usage: scripts/postgres/up.sh BASE
# Writes BASE/env (shell syntax): CAUSEWAY_TEST_PG_URL (postgresql://...),
# CAUSEWAY_TEST_PG_BIN (the server's bin directory), CAUSEWAY_TEST_PG_DATA.
set -euo pipefail
base=$(realpath -m "${1:?usage: up.sh BASE}")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
  echo "up.sh: PostgreSQL is not installed (scripts/install-deps.sh test)" >&2
  exit 2
fi
as_owner=()
if [[ $(id -u) -eq 0 ]]; then as_owner=(runuser -u postgres --); fi

mkdir -p "$base"/{data,run,log}
chmod 0755 "$base"
[[ $(id -u) -eq 0 ]] && chown postgres "$base"/{data,run,log}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
printf '%s\n' "$pass" > "$base/run/pwfile"
chmod 0644 "$base/run/pwfile"
"${as_owner[@]}" "$bin/initdb" -D "$base/data" -U causeway --pwfile="$base/run/pwfile" --auth=scram-sha-256 \
  --no-sync -E UTF8 --locale=C > "$base/log/initdb.log" 2>&1
rm -f "$base/run/pwfile"

echo "$port" > "$base/run/port"
"$(dirname "$0")/ctl.sh" "$base" start
PGPASSWORD="$pass" "$bin/psql" -q -h 127.0.0.1 -p "$port" -U causeway -d postgres -c "CREATE DATABASE causeway" > /dev/null

cat > "$base/env" <<ENV
export CAUSEWAY_TEST_PG_URL=postgresql://causeway:$pass@127.0.0.1:$port/causeway
export CAUSEWAY_TEST_PG_BIN=$bin
export CAUSEWAY_TEST_PG_DATA=$base/data
ENV
chmod 0600 "$base/env"
echo "postgres up on 127.0.0.1:$port (env in $base/env)"
