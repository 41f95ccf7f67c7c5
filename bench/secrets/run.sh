#!/usr/bin/env bash
# bench/secrets: ATTEMPTS attempts at once on the local executor, each with
# a federated AWS identity whose token lives LIFETIME seconds (refreshed
# every half of it) and a secret reference read by the broker from Secrets
# Manager (moto's server, through a proxy that counts every request).
#
#   bench/secrets/run.sh BUILD_DIR [ATTEMPTS] [LIFETIME_S] [RUN_S]
#
# Each attempt watches its token file for RUN_S seconds and reports the
# least time its token had left (a late refresh shows as a negative
# figure). The script reports: attempts that got their secret, reads of the
# secret per attempt (target: exactly 1), STS sessions per attempt,
# refreshes served, the least time left any attempt saw (target: > 0),
# and the server's peak memory with the attempts running, beside the same
# server running the same attempts with neither (the reference), as a ratio.
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [ATTEMPTS] [LIFETIME_S] [RUN_S]}")
attempts=${2:-200}
lifetime=${3:-20}
run_s=${4:-45}
root=$(cd "$(dirname "$0")/../.." && pwd)
moto=${CAUSEWAY_MOTO_VENV:-$HOME/.cache/causeway/moto-5.2.6}
sdks=${CAUSEWAY_CLOUD_SDKS_VENV:-$HOME/.cache/causeway/cloud-sdks-1}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 1 400); do curl -fs -o /dev/null "$1" && return 0; sleep 0.05; done; echo "no answer from $1" >&2; exit 1; }

moto_port=$(port)
"$moto/bin/moto_server" -H 127.0.0.1 -p "$moto_port" > "$work/moto.log" 2>&1 &
pids+=($!)
proxy_port=$(port)
python3 "$root/bench/secrets/counting_proxy.py" "$proxy_port" "$moto_port" &
pids+=($!)
wait_http "http://127.0.0.1:$moto_port/moto-api/"
wait_http "http://127.0.0.1:$proxy_port/counts"
aws="http://127.0.0.1:$proxy_port"
password="bench-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$sdks/bin/python" - "http://127.0.0.1:$moto_port" "$password" <<'PY'
import boto3, json, sys
sm = boto3.client("secretsmanager", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="bench", aws_secret_access_key="bench")
sm.create_secret(Name="load/db", SecretString=json.dumps({"password": sys.argv[2]}))
PY

# One server: with secrets and identities ("on"), or without (the reference).
serve() {
  local mode=$1 dir="$work/$1"
  mkdir -p "$dir/out"
  {
    cat <<YAML
providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]
clusters:
  - {name: box, provider: here, region: r1, local: {output_dir: $dir/out}, node_pools: [{name: cpu, cpus: $attempts, nodes: 1}]}
teams: [{name: nlp}]
queues: [{name: nlp, team: nlp, quotas: [{flavor: CPU, nominal: $attempts}]}]
YAML
    [[ $mode == on ]] && cat <<YAML
identity:
  workload: {audiences: [sts.amazonaws.com], lifetime: ${lifetime}s}
  federations:
    - {name: aws, kind: aws, role_arn: "arn:aws:iam::123456789012:role/bench", sts_endpoint: "$aws", default: true}
  secret_stores:
    - {name: sm, identity: aws, region: us-east-1, endpoint: "$aws", teams: {nlp: ["load/*"]}}
YAML
  } > "$dir/estate.yaml"
  "$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$dir" --estate "$dir/estate.yaml" > "$dir/serve.log" 2>&1 &
  server_pid=$!
  pids+=($server_pid)
  for _ in $(seq 1 400); do grep -q "listening on" "$dir/serve.log" 2>/dev/null && break; sleep 0.05; done
  server=$(grep -o 'http://127.0.0.1:[0-9]*' "$dir/serve.log" | head -1)
  token=$(cat "$dir/admin.token")
  local secrets="" run="sleep $run_s"
  if [[ $mode == on ]]; then
    secrets='secrets: {DB_PASSWORD: "aws-sm://load/db#password"}'
    run="python3 $root/bench/secrets/attempt.py $run_s $password"
  fi
  mkdir -p "$dir/requests"
  for i in $(seq 1 "$attempts"); do
    jq -n --arg spec "name: a$i
resources: {cpus: 1}
labels: {team: nlp, owner: bench@corp.example}
$secrets
run: $run" '{spec: $spec}' > "$dir/requests/$i.json"
  done
  local start=$(date +%s.%N)
  ls "$dir"/requests/*.json | xargs -P 16 -I{} curl -fs -o /dev/null -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' --data-binary @{} "$server/v1/jobs"
  # Until every attempt has ended, the server's peak resident memory.
  local done_count=0
  for _ in $(seq 1 $(( (run_s + 120) * 10 ))); do
    done_count=$(curl -fs -H "Authorization: Bearer $token" "$server/v1/jobs?state=succeeded&limit=1000" | jq '.jobs | length')
    (( done_count >= attempts )) && break
    sleep 0.1
  done
  local end=$(date +%s.%N)
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
  elapsed=$(echo "$end - $start" | bc)
  echo "$mode: $done_count of $attempts attempts succeeded in ${elapsed}s; server peak RSS $((hwm / 1024)) MiB"
  if [[ $mode == on ]]; then
    cat "$dir"/out/*.log 2>/dev/null | grep -h '^{"secret_ok"' > "$work/said.jsonl" || true
    refreshes=$(sqlite3 "$dir/causeway.db" "SELECT count(*) FROM audit_events WHERE action = 'workload.token.issue'")
    reads=$(sqlite3 "$dir/causeway.db" "SELECT count(*) FROM audit_events WHERE action = 'secret.read'")
  fi
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  peak[$mode]=$hwm
}
declare -A peak
serve off
serve on
counts=$(curl -fs "http://127.0.0.1:$proxy_port/counts")
got=$(jq -s '[.[] | select(.secret_ok)] | length' "$work/said.jsonl")
least=$(jq -s 'map(.least_left_s) | min' "$work/said.jsonl")
tokens=$(jq -s 'map(.tokens) | add' "$work/said.jsonl")
sm_reads=$(jq '[to_entries[] | select(.key | startswith("secretsmanager.GetSecretValue|load/db")) | .value] | add // 0' <<<"$counts")
sts=$(jq '[to_entries[] | select(.key | startswith("AssumeRoleWithWebIdentity|")) | .value] | add // 0' <<<"$counts")
echo "attempts that reported: $(wc -l < "$work/said.jsonl"); got their secret: $got"
echo "GetSecretValue calls: $sm_reads for $attempts attempts ($(echo "scale=2; $sm_reads / $attempts" | bc) per attempt; target 1.00); audited reads: $reads"
echo "STS sessions for the broker: $sts ($(echo "scale=2; $sts / $attempts" | bc) per attempt)"
echo "tokens refreshed through Causeway: $refreshes; distinct tokens the attempts saw: $tokens"
echo "least time any attempt's token had left: ${least}s (target > 0: no refresh late)"
echo "server peak RSS: with secrets and identities $((peak[on] / 1024)) MiB, without $((peak[off] / 1024)) MiB, ratio $(echo "scale=2; ${peak[on]} / ${peak[off]}" | bc)"
