#!/usr/bin/env bash
# bench/slurm_submit: jobs per second from submission to "started in Slurm",
# Causeway against plain sbatch, side by side on one local Slurm cluster
# (scripts/slurm/up.sh; needs root and the Slurm packages).
#
#   bench/slurm_submit/run.sh BUILD_DIR [JOBS]
#
# Both sides submit JOBS one-GPU jobs one after another from a shell loop
# (`sbatch` per job, or `causeway submit` per job), then wait until Slurm has
# started every one of them (none left PENDING). The node has 8 GPUs, so both
# are also bounded by Slurm running the jobs; the difference is what Causeway
# adds: its API, policy, quota, routing, durable commits and REST submission.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [JOBS]}")
jobs=${2:-100}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
chmod 0755 "$work"  # slurmrestd (user slurm) must reach the cluster's files
cleanup() {
  [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  "$root/scripts/slurm/down.sh" "$work/slurm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$root/scripts/slurm/up.sh" "$work/slurm" > /dev/null
source "$work/slurm/env"

# Seconds until Slurm has started every job whose name starts with $1.
wait_started() {
  while squeue -h -t PENDING -o %j | grep -q "^$1"; do sleep 0.02; done
}
now() { date +%s.%N; }

# 1. Plain sbatch.
t0=$(now)
for i in $(seq 1 "$jobs"); do
  sbatch -Q --job-name="ref-$i" --gres=gpu:h200:1 --output=/dev/null --wrap="true" > /dev/null
done
wait_started ref-
t_sbatch=$(echo "$(now) - $t0" | bc)

# 2. Causeway, routing onto the same cluster.
cat > "$work/estate.yaml" <<YAML
providers: [{name: lab, kind: slurm, regions: [{name: r1, zone: eu}]}]
clusters:
  - name: lab-slurm
    provider: lab
    region: r1
    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 1}]
    slurm: {url: "$CAUSEWAY_SLURM_URL", user: root, token_file: $CAUSEWAY_SLURM_TOKEN_FILE, partition: gpu, gres_type: h200, output_dir: $work/slurm/out}
prices: [{cluster: lab-slurm, gpu_type: H200, on_demand: "3.00"}]
YAML
printf 'resources: {accelerators: H200:1}\nrun: "true"\n' > "$work/job.yaml"
"$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$work/cw" --estate "$work/estate.yaml" --tick-ms 20 \
  > "$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
export CAUSEWAY_SERVER=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log") CAUSEWAY_TOKEN_FILE="$work/cw/admin.token"
t0=$(now)
for i in $(seq 1 "$jobs"); do "$build/causeway" submit "$work/job.yaml" > /dev/null; done
# Every job has left Causeway's queue (it is in Slurm) and Slurm started it.
while "$build/causeway" --json jobs --state pending --limit 1 | grep -q '"id"'; do sleep 0.02; done
wait_started cw-
t_cw=$(echo "$(now) - $t0" | bc)

awk -v n="$jobs" -v a="$t_sbatch" -v b="$t_cw" 'BEGIN {
  printf "{\"bench\": \"slurm_submit\", \"jobs\": %d, \"sbatch_s\": %.2f, \"sbatch_jobs_per_s\": %.1f, \"causeway_s\": %.2f, \"causeway_jobs_per_s\": %.1f, \"causeway_over_sbatch\": %.2f}\n", n, a, n / a, b, n / b, (n / b) / (n / a)
  printf "  target: Causeway adds at most 10%% (ratio >= 0.90): %s\n", ((n / b) / (n / a) >= 0.90 ? "met" : "NOT met")
}'
