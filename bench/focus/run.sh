#!/usr/bin/env bash
# bench/focus: `causeway cost import` of a FOCUS 1.2 file plus `causeway cost
# showback --by team,month`, side by side in one run with DuckDB doing the
# same aggregation (read_csv, group by team and month) on the same file.
# Both use every core; peak memory (RSS) is reported for each.
#
#   bench/focus/run.sh BUILD_DIR [ROWS]      (ROWS default 10,000,000)
#
# Needs node and npm (DuckDB comes from npm: @duckdb/node-api, installed
# into bench/focus/node_modules on first use). The generated file (about
# 580 bytes a row) goes to $TMPDIR and is removed afterwards.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [ROWS]}")
rows=${2:-10000000}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

if [[ ! -d "$here/node_modules/@duckdb/node-api" ]]; then
  (cd "$here" && npm install --no-audit --no-fund --silent) >&2
fi

echo "bench/focus: $rows rows of FOCUS 1.2 on $(nproc) cores"
"$build/bench/focus_gen" "$rows" > "$dir/bill.csv"
echo "  file: $(du -h "$dir/bill.csv" | cut -f1)"
# Read once so both sides start from the page cache.
cat "$dir/bill.csv" > /dev/null

measure() {  # measure OUT_PREFIX CMD...: wall seconds and peak RSS (MiB) of CMD
  local out=$1; shift
  /usr/bin/time -f "%e %M" -o "$out.time" "$@" > "$out.out" 2> "$out.err" || { cat "$out.err" >&2; exit 1; }
}

measure "$dir/import" "$build/causeway" cost import "$dir/bill.csv" --provider bench --data-dir "$dir/data"
measure "$dir/showback" "$build/causeway" cost showback --by team,month --data-dir "$dir/data" --format csv
measure "$dir/duckdb" node "$here/duckdb_showback.mjs" "$dir/bill.csv"

read -r import_s import_kb < "$dir/import.time"
read -r showback_s showback_kb < "$dir/showback.time"
read -r duck_s duck_kb < "$dir/duckdb.time"
groups=$(($(wc -l < "$dir/showback.out") - 1))
duck_groups=$(grep -o '"groups":[0-9]*' "$dir/duckdb.out" | grep -o '[0-9]*$')
echo "  causeway: import ${import_s}s (peak $((import_kb / 1024)) MiB), showback ${showback_s}s, $groups team-months"
echo "            $(head -n 1 "$dir/import.out")"
echo "  duckdb:   read_csv + group by ${duck_s}s (peak $((duck_kb / 1024)) MiB), $duck_groups team-months"
awk -v a="$import_s" -v b="$showback_s" -v d="$duck_s" 'BEGIN {
  printf "  causeway (import + showback) / duckdb: %.2f (target <= 1.00: %s)\n", (a + b) / d, ((a + b) <= d ? "met" : "NOT met")
}'
if [[ "$groups" != "$duck_groups" ]]; then
  echo "  MISMATCH: causeway found $groups team-months, duckdb $duck_groups" >&2
  exit 1
fi
