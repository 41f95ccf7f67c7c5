#!/usr/bin/env bash
# bench/datasets: replication between two S3 servers on loopback (moto's
# server mode, as the tests use), in one run:
#   1. `causeway dataset replicate` of OBJECTS objects of SIZE bytes, against
#      `rclone copy --checksum` alone on the same pair and data: throughput
#      ratio (target, issue 23: at least 0.9). Causeway's time runs from the
#      request to the replica verified, so it includes the listing that
#      verifies the copy.
#   2. A new version changing 1% of the objects, replicated after the first:
#      the bytes moved across, against the version's bytes (about 1%).
#   3. manifest_bench: a manifest of 1,000,000 objects built and verified.
#   bench/datasets/run.sh BUILD_DIR [OBJECTS] [SIZE]
# Needs rclone and moto (scripts/install-deps.sh test).
set -euo pipefail
build=$(realpath "${1:?usage: run.sh BUILD_DIR [OBJECTS] [SIZE]}")
objects=${2:-200}
size=${3:-1048576}
root=$(cd "$(dirname "$0")/../.." && pwd)
moto="${CAUSEWAY_MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway/moto-5.2.6}/bin/moto_server"
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
eu=$(port); us=$(port)
"$moto" -H 127.0.0.1 -p "$eu" > /dev/null 2>&1 & pids+=($!)
"$moto" -H 127.0.0.1 -p "$us" > /dev/null 2>&1 & pids+=($!)
for p in $eu $us; do for _ in $(seq 1 200); do curl -s "http://127.0.0.1:$p/" > /dev/null && break; sleep 0.05; done; done
conf="$dir/rclone.conf"
for r in "eu $eu" "us $us"; do
  set -- $r
  printf '[%s]\ntype = s3\nprovider = Other\naccess_key_id = bench\nsecret_access_key = bench\nendpoint = http://127.0.0.1:%s\nregion = us-east-1\n\n' "$1" "$2"
done > "$conf"
rc() { env -i PATH=/usr/bin:/bin HOME="$dir" rclone --config "$conf" "$@"; }
rc mkdir eu:data; rc mkdir us:data; rc mkdir us:ref

mkdir -p "$dir/v1"
for i in $(seq 1 "$objects"); do head -c "$size" /dev/urandom > "$dir/v1/shard-$(printf %05d "$i").bin"; done
rc copy "$dir/v1" eu:data/c4/v1 --transfers 8
total=$((objects * size))

sed -n '1,/^datasets:/p' "$root/examples/estate.yaml" > "$dir/estate.yaml"
cat >> "$dir/estate.yaml" <<YAML
  - {name: c4, owner: nlp}
data:
  rclone_config: $conf
  locations:
    - {name: eu, provider: nebius, region: eu-north1, remote: "eu:data"}
    - {name: us, provider: coreweave, region: us-east-04, remote: "us:data"}
YAML
"$build/causeway" serve --listen 127.0.0.1:0 --data-dir "$dir/data" --estate "$dir/estate.yaml" > "$dir/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do grep -q "listening on" "$dir/serve.log" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$dir/serve.log" | head -1)
token=$(cat "$dir/data/admin.token")
cw() { "$build/causeway" --server "$url" --token "$token" "$@"; }
api() { curl -s -H "Authorization: Bearer $token" "$@"; }
now() { date +%s.%N; }

cw dataset register c4 --from eu:c4/v1 --version v1 > /dev/null
# Replicates REF to us and waits (polling every 10 ms, in one Python
# process so that the polling costs little); prints "seconds bytes_moved state".
replicate() {
  python3 - "$url" "$token" "$1" <<'PY'
import json, sys, time, urllib.request
url, token, ref = sys.argv[1:]
def call(method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        return json.load(r)
t0 = time.monotonic()
rep = call("POST", "/v1/datasets/" + ref + "/replicate", {"to": "us"})
while rep["state"] == "running":
    time.sleep(0.01)
    rep = call("GET", "/v1/replications/" + rep["id"])
print(time.monotonic() - t0, rep["bytes_moved"], rep["state"])
PY
}
read -r cw_s cw_bytes cw_state < <(replicate c4@v1)
t0=$(now); rc copy eu:data/c4/v1 us:ref/c4/v1 --checksum; rc_s=$(python3 -c "print($(now) - $t0)")

# Version 2: 1% of the objects changed (at least one).
changed=$(( (objects + 99) / 100 ))
rc copy eu:data/c4/v1 eu:data/c4/v2
for i in $(seq 1 "$changed"); do
  head -c "$size" /dev/urandom > "$dir/new.bin"; rc copyto "$dir/new.bin" "eu:data/c4/v2/shard-$(printf %05d "$i").bin"
done
cw dataset register c4 --from eu:c4/v2 --version v2 > /dev/null
read -r v2_s v2_bytes v2_state < <(replicate c4@v2)

python3 - "$objects" "$size" "$total" "$cw_s" "$cw_bytes" "$cw_state" "$rc_s" "$changed" "$v2_bytes" "$v2_state" "$v2_s" <<'PY'
import json, sys
objects, size, total, cw_s, cw_bytes, cw_state, rc_s, changed, v2_bytes, v2_state, v2_s = sys.argv[1:]
total, cw_s, rc_s, v2_bytes = int(total), float(cw_s), float(rc_s), int(v2_bytes)
print(json.dumps({"bench": "dataset_replication", "objects": int(objects), "object_bytes": int(size), "bytes": total,
                  "causeway_s": round(cw_s, 3), "causeway_mb_s": round(total / cw_s / 1e6, 2), "causeway_state": cw_state,
                  "causeway_bytes_moved": int(cw_bytes), "rclone_alone_s": round(rc_s, 3),
                  "rclone_alone_mb_s": round(total / rc_s / 1e6, 2), "throughput_ratio": round(rc_s / cw_s, 3),
                  "target_ratio": 0.9}))
print(json.dumps({"bench": "dataset_new_version", "objects_changed": int(changed), "percent_objects_changed": round(100 * int(changed) / int(objects), 2),
                  "bytes_moved": v2_bytes, "percent_bytes_moved": round(100 * v2_bytes / total, 2), "state": v2_state,
                  "seconds": round(float(v2_s), 3)}))
PY
"$build/bench/manifest_bench" 1000000
