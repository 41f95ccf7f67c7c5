#!/usr/bin/env bash
# bench/submit: acknowledged submits per second through the HTTP API, with
# durable (fsync'd, group-committed) commits, 16 concurrent clients, servers
# and load generator on the same machine. Side by side in one run:
#   1. one server on SQLite (synchronous=FULL);
#   2. two replicas on one PostgreSQL (scripts/postgres/up.sh, fsync on),
#      the clients spread over both; skipped with a note when PostgreSQL is
#      not installed.
#
#   bench/submit/run.sh BUILD_DIR [CLIENTS] [SECONDS]
#
# Reference on the same 2-core machine (see README, "Performance"): Slurm's
# sbatch submits about 170 jobs/s; SchedMD documents 500/s sustained.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [CLIENTS] [SECONDS]}")
clients=${2:-16}
seconds=${3:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
chmod 0755 "$dir"
cleanup() {
  for f in "$dir"/*/serve.pid; do [[ -f "$f" ]] && kill "$(cat "$f")" 2>/dev/null; done
  wait 2>/dev/null || true
  "$root/scripts/postgres/down.sh" "$dir/pg" > /dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

# start NAME ARGS...: a server with its data in $dir/NAME; prints its port.
start() {
  local name=$1; shift
  mkdir -p "$dir/$name"
  "$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$dir/$name" "$@" > "$dir/$name/serve.log" 2>&1 &
  echo $! > "$dir/$name/serve.pid"  # this runs in $(...): the pid must outlive the subshell
  for _ in $(seq 1 200); do
    grep -q "listening on" "$dir/$name/serve.log" 2>/dev/null && break
    sleep 0.05
  done
  grep -o 'listening on http://127.0.0.1:[0-9]*' "$dir/$name/serve.log" | grep -o '[0-9]*$'
}
bench() {  # bench PORTS TOKEN
  "$build/bench/submit_bench" --port "$1" --token "$2" --clients "$clients" --seconds "$seconds" --warmup 2
}
rate_of() { grep -o '"submits_per_s": [0-9]*' <<< "$1" | grep -o '[0-9]*$'; }
# The result as a JSON line of its own, named (bench/record.sh records it).
named() { sed "s|^{|{\"bench\": \"$1\", |" <<< "$2"; }

echo "causeway submit benchmark: $clients clients, ${seconds}s each"
port=$(start sqlite)
token=$(cat "$dir/sqlite/admin.token")
sqlite_result=$(bench "$port" "$token")
echo "1 server, SQLite (synchronous=FULL):      $sqlite_result"
named submit/sqlite "$sqlite_result"
jobs=$(sqlite3 "$dir/sqlite/causeway.db" "SELECT count(*) FROM jobs")
commits=$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/metrics" | awk '/^causeway_store_commits_total/ {print $2}')
echo "  jobs stored: $jobs in $commits durable commits (avg $(( jobs / (commits > 0 ? commits : 1) )) per commit)"
sqlite_rate=$(rate_of "$sqlite_result")
echo "  vs sbatch reference (~170 jobs/s on this machine): $(awk -v r="$sqlite_rate" 'BEGIN {printf "%.1fx", r / 170}')"

if ! "$root/scripts/postgres/up.sh" "$dir/pg" > "$dir/pg.log" 2>&1; then
  echo "2 replicas, PostgreSQL: skipped ($(tail -n 1 "$dir/pg.log"))"
  exit 0
fi
source "$dir/pg/env"
port_a=$(start a --db "$CAUSEWAY_TEST_PG_URL")
mkdir -p "$dir/b" && cp "$dir/a/admin.token" "$dir/b/admin.token"
port_b=$(start b --db "$CAUSEWAY_TEST_PG_URL")
pg_result=$(bench "$port_a,$port_b" "$(cat "$dir/a/admin.token")")
echo "2 replicas, one PostgreSQL (fsync on):   $pg_result"
named submit/postgres-2-replicas "$pg_result"
pg_rate=$(rate_of "$pg_result")
awk -v a="$pg_rate" -v b="$sqlite_rate" 'BEGIN {
  printf "  two replicas on PostgreSQL / one server on SQLite: %.2f (target >= 1.00: %s)\n", a / b, (a >= b ? "met" : "NOT met")
}'
