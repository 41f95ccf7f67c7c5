#!/usr/bin/env bash
# The whole Causeway loop on the embedded simulated estate and a SQLite file:
# jobs from three teams are checked against policy, admitted under team
# quotas, routed to the right provider, run, preempted, finished and
# accounted for; an idle notebook is reaped; a provider's FOCUS bill is
# imported and shown back by team, and a per-node untagged one allocated to
# the jobs that ran on those nodes; a dataset version is registered,
# replicated with rclone and verified; a service fails over from one
# provider to its warm alternate on another and is rolled over to a new
# revision; the audit trail is verified at the end.
#
# Usage: scripts/demo.sh PATH/TO/causeway [--keep]
#   --keep  leave the server running afterwards for exploration
# Environment: DEMO_SPEED (default 600: one real second is ten simulated
# minutes), DEMO_TIMEOUT (seconds to wait for every job, default 100).
set -euo pipefail
cw=$(realpath "${1:?usage: demo.sh PATH/TO/causeway [--keep]}")
keep=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
jobs="$root/examples/jobs"
data=$(mktemp -d "${TMPDIR:-/tmp}/causeway-demo.XXXXXX")
speed=${DEMO_SPEED:-600}
timeout=${DEMO_TIMEOUT:-100}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Prints a command (secrets shortened).
print() { printf '$ %s\n' "$(sed -e 's/cw_[a-z0-9]\{52\}/cw_…/g' -e "s|$cw|causeway|g" -e "s|$root/||g" <<<"$*")"; }
# A step that must succeed: its failure ends the demo with that status.
show() {
  print "$@"
  local rc=0
  "$@" || rc=$?
  if ((rc != 0)); then
    echo "demo: this step failed (exit $rc)" >&2
    exit "$rc"
  fi
}
# A step that shows a refusal: it must fail, and the demo goes on.
refused() {
  print "$@"
  if "$@"; then
    echo "demo: this step should have been refused" >&2
    exit 1
  fi
}
submit() { "$cw" --json submit "$jobs/$1.yaml" | grep -o '"id": "job_[0-9A-Z]*"' | head -1 | cut -d'"' -f4; }

# The example estate, with two storage locations for datasets: directories
# here standing for object storage in two regions (rclone's local backend;
# real ones are S3 remotes in rclone's config, docs/datasets.md).
estate="$data/estate.yaml"
cat "$root/examples/estate.yaml" - > "$estate" <<YAML

data:
  locations:
    - {name: nebius-eu, provider: nebius, region: eu-north1, remote: ":local:$data/storage/nebius-eu",
       storage_per_gb_month: "0.02"}
    - {name: coreweave-us, provider: coreweave, region: us-east-04, remote: ":local:$data/storage/coreweave-us",
       storage_per_gb_month: "0.03"}
  transfer_prices:
    - {from: nebius, to: "*", per_gb: "0.05", kind: egress}
YAML
"$cw" serve --listen 127.0.0.1:0 --data-dir "$data" --estate "$estate" --sim-speed "$speed" \
  > "$data/serve.log" 2>&1 &
pid=$!
follower=
cleanup() {
  [[ -n "$follower" ]] && kill "$follower" 2>/dev/null || true
  if [[ "$keep" != "--keep" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
for _ in $(seq 1 200); do
  grep -q "listening on" "$data/serve.log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$data/serve.log"; exit 1; }
  sleep 0.05
done
export CAUSEWAY_SERVER=$(grep -o 'http://127.0.0.1:[0-9]*' "$data/serve.log" | head -1)
export CAUSEWAY_TOKEN_FILE="$data/admin.token"

step "A server on the simulated estate (state in $data)"
grep -v "admin token" "$data/serve.log"
show "$cw" clusters
show "$cw" queues

step "Progress as it happens (audit trail; times are simulated)"
# The follower writes through a process substitution so that $! is its own
# pid (killing it ends the sed too).
"$cw" audit log --follow --since 1h 2>/dev/null > >(sed -u 's/^/   | /') &
follower=$!

step "Admission policy: no cost owner, no run"
refused "$cw" submit "$jobs/no-owner.yaml"

step "Submit work for three teams"
llama=$(submit train-llama)
eval_id=$(submit eval-sweep)
submit nlp-eval > /dev/null
submit vision-sweep > /dev/null
submit vision-sweep > /dev/null
borrower=$(submit vision-sweep)
submit finetune-vision > /dev/null
submit spot-augment > /dev/null
submit idle-notebook > /dev/null
for _ in 1 2 3 4; do submit research-batch > /dev/null; done
sleep 1

step "Why each job went where it did"
show "$cw" explain "$llama"
show "$cw" explain "$eval_id"
step "A team queued behind its quota, waiting to borrow"
show "$cw" explain "$borrower"
step "Before submitting another: when would it start, where, at what cost? (the scheduler run ahead; nothing submitted)"
show "$cw" plan job "$jobs/vision-sweep.yaml"

step "Urgent work preempts low-priority work of its own queue"
show "$cw" submit "$jobs/research-urgent.yaml"
sleep 1
show "$cw" jobs --team research

step "A pipeline: each step runs once the one before it has succeeded"
show "$cw" submit "$root/examples/pipelines/vision-nightly.yaml"

step "A job group: its tasks start together; the auxiliary one ends after the primary one"
show "$cw" submit "$root/examples/job-groups/nlp-rl.yaml"

step "A job that needs CUDA 12.4 goes only where the estate declares it"
cuda_id=$(submit eval-cuda)
sleep 1  # placed by the next scheduler cycle
show "$cw" explain "$cuda_id"

step "Waiting for every job to finish (at ${speed}x)"
deadline=$((SECONDS + timeout))
while :; do
  active=$("$cw" --json jobs --limit 1000 | grep -cE '"state": "(pending|running|admitted)"' || true)
  [[ "$active" == "0" ]] && break
  if (( SECONDS > deadline )); then echo "jobs still active after ${timeout}s" >&2; "$cw" jobs; exit 1; fi
  sleep 1
done
sleep 1  # lets the follower print the last events
kill "$follower" 2>/dev/null || true; wait "$follower" 2>/dev/null || true; follower=

step "Summary"
show "$cw" jobs
show "$cw" queues

step "The idle notebook was reaped: warned, then cancelled after the grace period"
show "$cw" audit log --action reaper. --since 7d

step "What a job cost, attempt by attempt (preempted attempts are cost too)"
show "$cw" cost job "$llama"

step "Provenance: the signed record of what ran, where, on what, resumed from which checkpoint"
show "$cw" provenance "$llama" -o "$data/train-llama.provenance.json"
show "$cw" provenance verify "$data/train-llama.provenance.json"
"$cw" provenance "$llama" --statement > "$data/train-llama.statement.json"
attempts=$(grep -c '"name": "attempt/' "$data/train-llama.statement.json" || true)
if (( attempts > 1 )); then
  step "What changed between its first and last attempts"
  show "$cw" provenance diff "$llama@1" "$llama@$attempts"
else
  step "What differed between two runs"
  show "$cw" provenance diff "$llama" "$eval_id"
fi
step "A rerun pinned to what the record says (GPU type and count, nodes, CUDA, driver, image digest)"
show "$cw" rerun "$llama" --dry-run

step "The provider's bill (FOCUS 1.2), joined to teams by the tags Causeway sets on what it launches"
show "$cw" cost import "$root/examples/bills/nebius-2026-10.csv" --provider nebius
show "$cw" cost import "$root/examples/bills/nebius-2026-10.csv" --provider nebius
show "$cw" cost showback --by team --period 2026-10
step "Unused commitment and untagged storage shared across teams, in proportion to use"
show "$cw" cost showback --by team --period 2026-10 --share proportional
step "Cost per completed job, from the ledger: teams, then providers side by side on the same GPU type"
show "$cw" cost showback --metered --by team
show "$cw" cost showback --metered --by provider,gpu
step "Waste: preempted and failed attempts, idle time reaped, unused reservations (shared by use) and commitments"
# The demo's own days (the simulated clock runs ahead of the wall's).
today=$(date -u +%F)
tomorrow=$(date -u -d "$today + 1 day" +%F)
show "$cw" waste --period "$today..$(date -u -d "$today + 2 days" +%F)" --share-unused proportional
show "$cw" cost showback --by charge-category,pricing-category --period 2026-10

step "A per-node, untagged export (as CoreWeave's): each node-day allocated to the jobs that ran there, by GPU-seconds"
# Two days of four H100 nodes from today (the simulated clock runs ahead).
{
  echo "ChargePeriodStart,ChargePeriodEnd,BilledCost,EffectiveCost,ConsumedQuantity,ConsumedUnit,ResourceId,ServiceCategory"
  for d in "$today" "$tomorrow"; do
    for n in 01 02 03 04; do echo "${d}T00:00:00Z,$(date -u -d "$d + 1 day" +%F)T00:00:00Z,816.00,816.00,192,GPU-Hours,cw-us-east-04-node-$n,Compute"; done
  done
} > "$data/coreweave-nodes.csv"
show "$cw" cost import "$data/coreweave-nodes.csv" --provider coreweave
show "$cw" cost showback --by team --provider coreweave --allocate
step "Identity: a researcher onboarded through SCIM, working under their group's role, moved, revoked; nothing left behind"
show "$cw" acceptance identity --team nlp --out "$data"

step "A federated job: short-lived AWS credentials the way boto3 looks for them, and no static key (a second server, running jobs on this machine)"
fed="$data/federated"
mkdir -p "$fed/out"
cat > "$fed/estate.yaml" <<YAML
providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]
clusters:
  - {name: laptop, provider: here, region: r1, local: {output_dir: $fed/out},
     node_pools: [{name: cpu, cpus: 2, nodes: 1}]}
teams: [{name: nlp}]
queues: [{name: nlp-cpu, team: nlp, quotas: [{flavor: CPU, nominal: 2}]}]
identity:
  workload: {audiences: [sts.amazonaws.com], lifetime: 15m}
  federations:
    - {name: aws-training-data, kind: aws, role_arn: "arn:aws:iam::123456789012:role/nlp-jobs", teams: [nlp], default: true}
YAML
cat > "$fed/job.yaml" <<'YAML'
name: reads-s3-with-its-own-identity
resources: {cpus: 1}
labels: {team: nlp, owner: alice@corp.example}
run: |
  echo "AWS_ROLE_ARN=$AWS_ROLE_ARN"
  echo "AWS_ROLE_SESSION_NAME=$AWS_ROLE_SESSION_NAME"
  echo "token file: $(stat -c '%a %U' "$AWS_WEB_IDENTITY_TOKEN_FILE") $AWS_WEB_IDENTITY_TOKEN_FILE"
  payload=$(cut -d. -f2 "$AWS_WEB_IDENTITY_TOKEN_FILE" | tr '_-' '/+')
  while (( ${#payload} % 4 )); do payload="$payload="; done
  echo "its claims: $(base64 -d <<<"$payload" 2>/dev/null)"
  echo "static AWS keys in the environment: $(env | grep -c '^AWS_\(ACCESS_KEY_ID\|SECRET_ACCESS_KEY\|SESSION_TOKEN\)=' || true)"
YAML
"$cw" serve --listen 127.0.0.1:0 --data-dir "$fed" --estate "$fed/estate.yaml" > "$fed/serve.log" 2>&1 &
fed_pid=$!
for _ in $(seq 1 200); do grep -q "listening on" "$fed/serve.log" 2>/dev/null && break; sleep 0.05; done
fed_server=$(grep -o 'http://127.0.0.1:[0-9]*' "$fed/serve.log" | head -1)
fed_cw() { CAUSEWAY_SERVER=$fed_server CAUSEWAY_TOKEN_FILE=$fed/admin.token "$cw" "$@"; }
print causeway submit federated/job.yaml
fed_job=$(fed_cw --json submit "$fed/job.yaml" | grep -o '"id": "job_[0-9A-Z]*"' | head -1 | cut -d'"' -f4)
for _ in $(seq 1 600); do
  fed_cw --json job "$fed_job" | grep -q '"state": "succeeded"' && break
  sleep 0.05
done
show fed_cw logs "$fed_job"
show fed_cw credentials --job "$fed_job"
kill "$fed_pid"; wait "$fed_pid" 2>/dev/null || true

step "One audit trail across providers: CoreWeave's Kubernetes log, GCP's and AWS's beside Causeway's own, as OCSF"
show "$cw" audit import "$root/examples/audit/k8s-audit.jsonl" --source k8s --provider coreweave
show "$cw" audit import "$root/examples/audit/gcp-audit.json" --source gcp --provider gcp
show "$cw" audit import "$root/examples/audit/cloudtrail.json" --source cloudtrail --provider aws
show "$cw" audit import "$root/examples/audit/k8s-audit.jsonl" --source k8s --provider coreweave
show "$cw" audit search --actor alice@corp.example
show "$cw" audit search --action delete --since 30d
step "What the trail does not cover: buckets made before logging was turned on, sources not imported, short retention"
show "$cw" audit coverage
step "The chain's head signed (ES256); the trail exported to a SIEM file; verified with the public key alone"
show "$cw" audit checkpoint
"$cw" audit keys > "$data/audit-keys.json"
show "$cw" audit export --to "file:$data/siem/audit.jsonl" --cursor "$data/siem.cursor"
show "$cw" audit verify

step "Recovery proven live: a checkpointing job's provider taken down, resumed elsewhere from its checkpoint"
show "$cw" acceptance recovery --team vision --out "$data"
step "Residency proven live: a job bound to the EU keeps its checkpoints and logs there; one outside is refused"
show "$cw" acceptance residency --team nlp --zone eu --hold 3 --out "$data"
show "$cw" acceptance list

step "A service: replicas behind one endpoint on HAProxy, a warm alternate on another provider, a failover when the preferred one goes down, and a rolling update"
show "$cw" service up "$root/examples/services/chat.yaml"
for _ in $(seq 1 300); do
  "$cw" --json service status chat | grep -q '"mode": "normal"' && break
  sleep 0.1
done
show "$cw" service status chat
print causeway provider outage coreweave on
went=$(date +%s%N)
"$cw" provider outage coreweave on
for _ in $(seq 1 300); do
  "$cw" --json service status chat | grep -q '"mode": "failed_over"' && break
  sleep 0.05
done
echo "failed over to its warm alternate $(( ($(date +%s%N) - went) / 1000000 )) ms after the outage began (the control loop passes once a second)"
show "$cw" service status chat
show "$cw" provider outage coreweave off
# A new revision (a bigger model), rolled over: each old replica leaves as
# its successor is ready, and the endpoint never stops answering.
sed 's|Qwen/Qwen2.5-1.5B-Instruct|Qwen/Qwen2.5-3B-Instruct|' "$root/examples/services/chat.yaml" > "$data/chat-v2.yaml"
show "$cw" service update chat "$data/chat-v2.yaml"
for _ in $(seq 1 300); do
  # Read whole first: grep -q stops reading at its first match, and with
  # pipefail the writer's SIGPIPE would read as "no match".
  replicas=$("$cw" --json service status chat)
  grep -q '"revision": 1,' <<< "$replicas" || break
  sleep 0.1
done
show "$cw" service status chat
show "$cw" service down chat

step "Datasets: a version named by its contents, copied to another region with rclone, verified; a changed object is caught"
mkdir -p "$data/storage/nebius-eu/c4/2024-05/train" "$data/storage/coreweave-us"
for i in 0 1 2 3; do
  head -c 200000 /dev/urandom | base64 > "$data/storage/nebius-eu/c4/2024-05/train/shard-$i.jsonl"
done
show "$cw" dataset register c4 --from nebius-eu:c4/2024-05 --version 2024-05
show "$cw" dataset replicate c4@2024-05 --to coreweave/us-east-04 --bwlimit 50M
echo "tampered" >> "$data/storage/coreweave-us/c4/2024-05/train/shard-2.jsonl"
refused "$cw" dataset verify c4@2024-05 --at coreweave-us
show "$cw" dataset replicate c4@2024-05 --to coreweave-us
show "$cw" dataset show c4@2024-05

step "Planning before signing: the demo's own history replayed through the scheduler, as the estate is and with 64 more reserved H200s"
show "$cw" plan trace --from-history --since 30d --data-dir "$data" --estate "$root/examples/estate.yaml" \
  --add-reservation nebius-eu-h200:H200:64:12mo:2.30 --seeds 3 --html "$data/plan.html"

step "The four questions before production work goes to a provider, answered from the running system"
show "$cw" readiness questions --provider nebius
show "$cw" readiness export --oscal -o "$data/readiness.oscal.json"

step "Readiness at nebius: each control with its owner and evidence (no owner in the directory: not in place)"
show "$cw" readiness --provider nebius

step "The web console, on the same address: jobs, queues, cost, GPUs, audit, readiness and people in a browser"
echo "console: $CAUSEWAY_SERVER/ (sign in with the API token in $CAUSEWAY_TOKEN_FILE)"
if [[ "$keep" == "--keep" ]]; then
  step "The server keeps running (pid $pid)"
  echo "open $CAUSEWAY_SERVER/ in a browser, or:"
  echo "export CAUSEWAY_SERVER=$CAUSEWAY_SERVER CAUSEWAY_TOKEN_FILE=$CAUSEWAY_TOKEN_FILE"
  echo "then try: causeway jobs, causeway explain ID, causeway queues; stop it with: kill $pid"
else
  kill "$pid"; wait "$pid" 2>/dev/null || true
  step "Stopped; the database file verifies offline too, its checkpoints against the public key alone"
  show "$cw" audit verify --data-dir "$data" --public-key "$data/audit-keys.json"
fi
