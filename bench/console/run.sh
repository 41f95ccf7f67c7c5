#!/usr/bin/env bash
# bench/console: the web console's first meaningful render per page, in
# Debian's Chromium (Performance API), with JOBS jobs (default 100,000) run
# through the simulated estate and a year of daily billing rollups in the
# database. Target (issue 22): under 300 ms at p95 on each page.
#   bench/console/run.sh BUILD_DIR [JOBS] [LOADS]
# Needs chromium and the test peers (make test-deps).
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [JOBS] [LOADS]}")
jobs=${2:-100000}
loads=${3:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
cleanup() { [[ -f "$dir/serve.pid" ]] && kill "$(cat "$dir/serve.pid")" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

# A year of daily usage for three teams on four nodes, tagged as Causeway tags
# what it launches (FOCUS 1.2 columns, as examples/bills/).
bill="$dir/year.csv"
head -1 "$root/examples/bills/nebius-2026-10.csv" > "$bill"
start=$(date -u -d "$(date -u +%F) - 364 days" +%F)
for d in $(seq 0 364); do
  day=$(date -u -d "$start + $d days" +%F); next=$(date -u -d "$start + $((d + 1)) days" +%F)
  for t in nlp vision research; do
    for n in 1 2 3 4; do
      echo "403.20,ba-7731,Acme Research,Enterprise,USD,$next,$day,Usage,,H100 GPU hours on node-$t$n,Usage-Based,${next}T00:00:00Z,${day}T00:00:00Z,,,,,192,GPU-Hours,403.20,2.10,403.20,Nebius,566.40,2.95,Standard,192,GPU-Hours,Nebius,Nebius,eu-north1,Finland,node-$t$n,node-$t$n,GPU instance,Compute,Compute Cloud,h100,h100-od,proj-ml,ml-platform,\"{\"\"causeway-team\"\": \"\"$t\"\"}\""
    done
  done
done >> "$bill"
gzip -9 "$bill"
bill="$bill.gz"

"$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$dir" --estate "$root/examples/estate.yaml" --sim-speed 100000 --body-limit 16777216 \
  > "$dir/serve.log" 2>&1 &
echo $! > "$dir/serve.pid"
for _ in $(seq 1 200); do grep -q "listening on" "$dir/serve.log" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$dir/serve.log" | head -1)
node "$root/bench/console/measure.mjs" "$url" "$(cat "$dir/admin.token")" --jobs "$jobs" --bill "$bill" --loads "$loads"
