#!/usr/bin/env bash
# bench/audit_import: normalizing providers' audit logs to OCSF, side by side
# in one run with jq doing the same field mapping (k8s.jq, cloudtrail.jq) on
# the same files. A generated mix of N Kubernetes audit events and N
# CloudTrail records (generate.py, seeded); both write OCSF JSON lines to a
# file. Single-threaded, so events/s is also events/s per core.
#
#   bench/audit_import/run.sh BUILD_DIR [N]     (default N = 500000: a 1-million-event mix)
#
# Target (issue #8): >= 200,000 events/s per core and >= 10x jq.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [N]}")
n=${2:-500000}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
command -v jq > /dev/null || { echo "jq is not installed (apt-get install jq)"; exit 2; }

echo "generating $n Kubernetes audit events and $n CloudTrail records"
python3 "$here/generate.py" "$dir" "$n"
ls -l "$dir"/*.jsonl | awk '{printf "  %s: %.0f MB\n", $NF, $5 / 1e6}'

# cpu SECONDS of a command: user + system time, from /usr/bin/time.
measure() {
  local out=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$dir/time" "$@" > "$out" 2> "$dir/stderr" || { cat "$dir/stderr"; exit 1; }
  awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$dir/time"
}

total=$((2 * n))
read -r cw_wall_k cw_cpu_k < <(measure /dev/null "$build/causeway" audit import "$dir/k8s.jsonl" --source k8s --provider coreweave -o "$dir/k8s.ocsf")
read -r cw_wall_c cw_cpu_c < <(measure /dev/null "$build/causeway" audit import "$dir/cloudtrail.jsonl" --source cloudtrail --provider aws -o "$dir/ct.ocsf")
read -r jq_wall_k jq_cpu_k < <(measure "$dir/k8s.jq.ocsf" jq -c -f "$here/k8s.jq" "$dir/k8s.jsonl")
read -r jq_wall_c jq_cpu_c < <(measure "$dir/ct.jq.ocsf" jq -c -f "$here/cloudtrail.jq" "$dir/cloudtrail.jsonl")
events=$(cat "$dir/k8s.ocsf" "$dir/ct.ocsf" | wc -l)
jq_events=$(cat "$dir/k8s.jq.ocsf" "$dir/ct.jq.ocsf" | wc -l)
awk -v n="$total" -v e="$events" -v je="$jq_events" -v cwk="$cw_cpu_k" -v cwc="$cw_cpu_c" -v jqk="$jq_cpu_k" -v jqc="$jq_cpu_c" \
    -v cwwk="$cw_wall_k" -v cwwc="$cw_wall_c" -v jqwk="$jq_wall_k" -v jqwc="$jq_wall_c" 'BEGIN {
  cw = cwk + cwc; jqt = jqk + jqc
  printf "causeway audit import: %d events in %.2f s CPU (%.2f s wall): %.0f events/s per core (k8s %.0f/s, cloudtrail %.0f/s)\n", e, cw, cwwk + cwwc, n / cw, n / 2 / cwk, n / 2 / cwc
  printf "jq (same mapping):     %d events in %.2f s CPU (%.2f s wall): %.0f events/s per core\n", je, jqt, jqwk + jqwc, n / jqt
  printf "  causeway / jq: %.1fx (target >= 10x: %s); per core: %s (target >= 200000)\n", jqt / cw, (jqt / cw >= 10 ? "met" : "NOT met"), (n / cw >= 200000 ? "met" : "NOT met")
}'
