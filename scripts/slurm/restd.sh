#!/usr/bin/env bash
# Stops or restarts the slurmrestd of a cluster started by scripts/slurm/up.sh,
# on the same port: for testing what happens while the REST API is away.
# Usage: scripts/slurm/restd.sh BASE stop|start
set -euo pipefail
base=$(realpath -m "${1:?usage: restd.sh BASE stop|start}")
source "$base/env"
pidfile="$base/run/slurmrestd.pid"
case "${2:-}" in
  stop)
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      [[ -r /proc/$pid/stat && "$(awk '{print $3}' /proc/$pid/stat)" != "Z" ]] || exit 0
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    ;;
  start)
    port=${CAUSEWAY_SLURM_URL##*:}
    setsid env SLURM_JWT=daemon slurmrestd -u slurm -a rest_auth/jwt -s openapi/v0.0.38,openapi/dbv0.0.38 "127.0.0.1:$port" \
      >> "$base/log/slurmrestd.out" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    for _ in $(seq 1 100); do
      curl -sf -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $(cat "$CAUSEWAY_SLURM_TOKEN_FILE")" \
        "$CAUSEWAY_SLURM_URL/slurm/v0.0.38/ping" >/dev/null && exit 0
      sleep 0.1
    done
    echo "restd.sh: slurmrestd did not come back" >&2
    exit 1
    ;;
  *) echo "usage: restd.sh BASE stop|start" >&2; exit 2 ;;
esac
