#!/usr/bin/env bash
# bench/k8s_submit: completed jobs per second, Causeway against the same Jobs
# created straight through the API server, side by side on one real plane
# (scripts/k8s/plane.sh: kube-apiserver, etcd, controller manager,
# scheduler, KWOK's fake GPU nodes and Kueue admitting by quota); then
# Causeway's memory while its watch holds PODS pods.
#
#   bench/k8s_submit/run.sh BUILD_DIR [JOBS] [PODS]
#
# Both sides send JOBS one-GPU jobs, four requests at a time (curl): the
# reference POSTs suspended batch/v1 Jobs with Kueue's queue label to the API
# server; Causeway gets POST /v1/jobs and makes the same Jobs (with their
# Secrets) itself. Each side is timed from its first request until every
# job is complete: for the reference, each Job's Complete condition; for
# Causeway, each job "succeeded" in Causeway (it saw the Job complete).
# 8 fake nodes of 8 GPUs, one ClusterQueue of 64 GPUs for both namespaces;
# KWOK completes each pod at once, so what is measured is admission and
# the control loop, Kueue's and the controllers' on the reference side,
# theirs plus Causeway's on the other. Target: ratio >= 0.90.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [JOBS] [PODS]}")
jobs=${2:-500}
pods=${3:-10000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
cleanup() {
  [[ -n "${pid:-}" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  "$root/scripts/k8s/plane.sh" stop "$work/plane" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$root/scripts/k8s/plane.sh" start "$work/plane" > "$work/plane.log" 2>&1 || { tail -30 "$work/plane.log"; exit 1; }
source "$work/plane/plane.env"
k() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }
now() { date +%s.%N; }

{
  for ns in bench-ref bench-cw; do
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {bench: "yes"}}\n---\n' "$ns"
    printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: %s}\nspec: {clusterQueue: bench-cq}\n---\n' "$ns"
  done
  for i in $(seq 1 8); do
    cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: bench-gpu-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: bench-gpu-$i, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
---
YAML
  done
  cat <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: bench-h100}
spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bench-cq}
spec:
  namespaceSelector: {matchLabels: {bench: "yes"}}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: bench-h100
      resources:
      - {name: cpu, nominalQuota: "512"}
      - {name: memory, nominalQuota: 4Ti}
      - {name: nvidia.com/gpu, nominalQuota: "64"}
YAML
} > "$work/setup.yaml"
k apply -f "$work/setup.yaml" > /dev/null
k wait --for=condition=Active clusterqueue/bench-cq --timeout=60s > /dev/null
k wait --for=condition=Ready node -l type=kwok --timeout=60s > /dev/null

# 1. The reference: the Jobs straight through the API server.
mkdir -p "$work/ref"
for i in $(seq 1 "$jobs"); do
  cat > "$work/ref/$i.json" <<JSON
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "ref-$i", "namespace": "bench-ref", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
 "spec": {"suspend": true, "backoffLimit": 0, "completions": 1, "parallelism": 1,
  "template": {"spec": {"restartPolicy": "Never",
   "containers": [{"name": "main", "image": "ubuntu:22.04", "command": ["/bin/sh", "-c", "true"],
    "resources": {"requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"},
                  "limits": {"nvidia.com/gpu": "1"}}}]}}}}
JSON
done
token=$(cat "$K8S_TOKEN_FILE")
t0=$(now)
seq 1 "$jobs" | xargs -P 4 -I{} curl -sf --cacert "$K8S_CA" -H "Authorization: Bearer $token" \
  -H "Content-Type: application/json" --data-binary @"$work/ref/{}.json" -o /dev/null \
  "$K8S_API/apis/batch/v1/namespaces/bench-ref/jobs"
k wait --for=condition=complete job --all -n bench-ref --timeout=900s > /dev/null
t_ref=$(echo "$(now) - $t0" | bc)

# 2. Causeway, onto the same plane and quota.
cat > "$work/estate.yaml" <<YAML
providers: [{name: kc, kind: kubernetes, regions: [{name: r1, zone: eu}]}]
clusters:
  - name: kc-bench
    provider: kc
    region: r1
    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 8}]
    kubernetes: {api_server: "$K8S_API", ca_file: $K8S_CA, token_file: $K8S_TOKEN_FILE, namespace_prefix: bench-, local_queue: lq}
prices: [{cluster: kc-bench, gpu_type: H100, on_demand: "2.00"}]
teams: [{name: cw}]
YAML
"$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$work/cw" --estate "$work/estate.yaml" --tick-ms 20 \
  > "$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
server=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1)
admin=$(cat "$work/cw/admin.token")
printf '{"spec": "resources: {accelerators: H100:1}\\nlabels: {team: cw}\\nrun: \\"true\\"\\n"}' > "$work/job.json"
succeeded() {
  curl -sf -H "Authorization: Bearer $admin" "$server/v1/jobs?state=succeeded&limit=1000" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))'
}
t0=$(now)
seq 1 "$jobs" | xargs -P 4 -I{} curl -sf -H "Authorization: Bearer $admin" -H "Content-Type: application/json" \
  --data-binary @"$work/job.json" -o /dev/null "$server/v1/jobs"
while [[ $(succeeded) -lt $jobs ]]; do sleep 0.2; done
t_cw=$(echo "$(now) - $t0" | bc)
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
rss_jobs=$(rss)

# 3. Memory: PODS pods of Causeway's label in its namespace (held Pending
# by a node selector no node has), watched by its informer.
for start in $(seq 1 1000 "$pods"); do
  end=$((start + 999 > pods ? pods : start + 999))
  for i in $(seq "$start" "$end"); do
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: held-%d, namespace: bench-cw, labels: {app.kubernetes.io/managed-by: causeway, causeway-job: held-%d, causeway-attempt: "1"}}\nspec: {nodeSelector: {bench: nowhere}, containers: [{name: main, image: ubuntu:22.04}]}\n---\n' "$i" "$i"
  done > "$work/pods.yaml"
  k create -f "$work/pods.yaml" > /dev/null
done
rss_peak=$(rss)
for _ in $(seq 1 20); do sleep 1; r=$(rss); (( r > rss_peak )) && rss_peak=$r; done

awk -v n="$jobs" -v a="$t_ref" -v b="$t_cw" -v p="$pods" -v r0="$rss_jobs" -v r1="$rss_peak" 'BEGIN {
  printf "{\"bench\": \"k8s_submit\", \"jobs\": %d, \"direct_s\": %.2f, \"direct_jobs_per_s\": %.1f, \"causeway_s\": %.2f, \"causeway_jobs_per_s\": %.1f, \"causeway_over_direct\": %.2f, \"pods_watched\": %d, \"rss_after_jobs_mb\": %.0f, \"rss_with_pods_mb\": %.0f}\n", n, a, n / a, b, n / b, (n / b) / (n / a), p, r0 / 1024, r1 / 1024
  printf "  target: completed jobs per second at least 0.90 of the direct path: %s\n", ((n / b) / (n / a) >= 0.90 ? "met" : "NOT met")
}'
