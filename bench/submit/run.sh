#!/usr/bin/env bash
# bench/submit: acknowledged submits per second through the HTTP API, with
# durable (fsync'd, group-committed) SQLite commits, 16 concurrent clients,
# server and load generator on the same machine.
#
#   bench/submit/run.sh BUILD_DIR [CLIENTS] [SECONDS]
#
# Reference on the same 2-core machine (see README, "Performance"): Slurm's
# sbatch submits about 170 jobs/s; SchedMD documents 500/s sustained.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [CLIENTS] [SECONDS]}
clients=${2:-16}
seconds=${3:-10}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT

"$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$dir" > "$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  grep -q "listening on" "$dir/serve.log" 2>/dev/null && break
  sleep 0.05
done
port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$dir/serve.log" | grep -o '[0-9]*$')
token=$(cat "$dir/admin.token")
echo "causeway submit benchmark: $clients clients, ${seconds}s, durable SQLite commits (synchronous=FULL)"
"$build/bench/submit_bench" --port "$port" --token "$token" --clients "$clients" --seconds "$seconds" --warmup 2 | tee "$dir/result.json"
jobs=$(sqlite3 "$dir/causeway.db" "SELECT count(*) FROM jobs")
commits=$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/metrics" | awk '/^causeway_store_commits_total/ {print $2}')
rate=$(grep -o '"submits_per_s": [0-9]*' "$dir/result.json" | grep -o '[0-9]*$')
echo "jobs stored: $jobs in $commits durable commits (avg $(( jobs / (commits > 0 ? commits : 1) )) per commit)"
echo "vs sbatch reference (~170 jobs/s on this machine): $(awk -v r="$rate" 'BEGIN {printf "%.1fx", r / 170}')"
