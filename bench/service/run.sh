#!/usr/bin/env bash
# Requests/s and p50/p99 through HAProxy managed by Causeway (its
# configuration, replicas added through the runtime API, its control pass
# running beside the load) against HAProxy configured by hand with the same
# replicas, each side first in turn; then the control pass's CPU per 100 replicas.
# Target (issue 50): managed/by hand >= 0.95.
#
#   bench/service/run.sh BUILD_DIR [REPLICAS=4] [SECONDS=8] [ROUNDS=4] [CLIENTS=16]
set -euo pipefail
build="${1:?usage: bench/service/run.sh BUILD_DIR [REPLICAS] [SECONDS] [ROUNDS] [CLIENTS]}"
haproxy="$(command -v haproxy || echo /usr/sbin/haproxy)"
[[ -x "$haproxy" ]] || { echo "bench/service needs HAProxy (scripts/install-deps.sh test)"; exit 2; }
exec "$build/bench/service_bench" "$haproxy" "$build/bench/submit_bench" "${2:-4}" "${3:-8}" "${4:-4}" "${5:-16}"
