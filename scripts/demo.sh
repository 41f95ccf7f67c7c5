#!/usr/bin/env bash
# The Causeway flow on the embedded estate and a SQLite file: start the
# server, validate and submit job specs, list, inspect and cancel jobs, use a
# scoped token, read and verify the audit trail, then stop.
# Usage: scripts/demo.sh PATH/TO/causeway
set -euo pipefail
cw=$(realpath "${1:?usage: demo.sh PATH/TO/causeway}")
root=$(cd "$(dirname "$0")/.." && pwd)
data="$root/.data/demo"
rm -rf "$data"
mkdir -p "$data"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Prints a command (secrets shortened) and runs it; a failing command is part of the show.
show() { printf '$ %s\n' "$(sed 's/cw_[a-z0-9]\{52\}/cw_…/g' <<<"$*")"; "$@" || true; }

"$cw" serve --listen 127.0.0.1:0 --data-dir "$data" > "$data/serve.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
  grep -q "listening on" "$data/serve.log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$data/serve.log"; exit 1; }
  sleep 0.05
done
export CAUSEWAY_SERVER=$(grep -o 'http://127.0.0.1:[0-9]*' "$data/serve.log")
export CAUSEWAY_TOKEN_FILE="$data/admin.token"

step "Server started (state in $data)"
sed 's/cw_[a-z0-9]*/cw_… (redacted here)/' "$data/serve.log"

step "Validate job specs offline"
show "$cw" validate "$root/examples/jobs/train-llama.yaml"
cat > "$data/broken.yaml" <<'YAML'
name: broken
resources:
  accelerator: H100:8
num_nodes: 0
YAML
show "$cw" validate "$data/broken.yaml"

step "Submit three jobs from three teams"
for f in train-llama finetune-vision eval-sweep; do
  show "$cw" submit "$root/examples/jobs/$f.yaml" --idempotency-key "demo-$f"
done
step "Retry a submission with the same Idempotency-Key: no duplicate"
show "$cw" submit "$root/examples/jobs/eval-sweep.yaml" --idempotency-key demo-eval-sweep

step "Jobs and the estate"
show "$cw" jobs
show "$cw" clusters
id=$("$cw" --json jobs --team research | grep -o '"id": "job_[0-9A-Z]*"' | head -1 | cut -d'"' -f4)
step "Cancel $id"
show "$cw" cancel "$id" --reason "superseded"
show "$cw" job "$id"

step "A read-only token cannot submit"
secret=$("$cw" --json token create --name demo-reader --scope jobs:read --ttl 1h | grep -o '"secret": "cw_[a-z0-9]*"' | cut -d'"' -f4)
show env CAUSEWAY_TOKEN="$secret" "$cw" jobs --team nlp
show env CAUSEWAY_TOKEN="$secret" "$cw" submit "$root/examples/jobs/eval-sweep.yaml"
show "$cw" token list

step "The audit trail, hash-chained"
show "$cw" audit log
show "$cw" audit verify

step "Stop the server and verify the database file offline"
kill "$pid"; wait "$pid" 2>/dev/null || true
show "$cw" audit verify --data-dir "$data"
echo
echo "Done. Start it yourself with: make run"
