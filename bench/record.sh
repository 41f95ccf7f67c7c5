#!/usr/bin/env bash
# Runs one benchmark and records its figures as JSON lines (bench/record.py):
# its output is shown as it comes, and every number of every JSON object it
# prints on a line of its own is appended to $CAUSEWAY_BENCH_OUT (default
# build/release/bench-results.jsonl) with the commit and the machine.
#
#   bench/record.sh NAME COMMAND [ARGS...]
# Exits with the benchmark's own status.
set -uo pipefail
name="${1:?usage: bench/record.sh NAME COMMAND [ARGS...]}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${CAUSEWAY_BENCH_OUT:-$root/build/release/bench-results.jsonl}"
mkdir -p "$(dirname "$out")"
commit="${CAUSEWAY_BENCH_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
if [[ -z "${CAUSEWAY_BENCH_COMMIT:-}" ]] && ! git -C "$root" diff --quiet HEAD 2>/dev/null; then commit="$commit-dirty"; fi
model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)"
machine="${CAUSEWAY_BENCH_MACHINE:-$(uname -m), $(nproc) cores, ${model:-unknown CPU}, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)}"
"$@" | python3 "$root/bench/record.py" "$name" "$out" "$commit" "$machine"
status=("${PIPESTATUS[@]}")
[[ "${status[1]}" == 0 ]] || echo "bench/record.sh: recording $name's figures failed" >&2
exit "${status[0]}"
