#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for tests and benchmarks:
# etcd, kube-apiserver (RBAC, an audit policy and log), kube-controller-manager,
# kube-scheduler, KWOK (fake nodes, no kubelet) and Kueue (webhooks on a
# loopback URL), on free ports, with everything under DIR.
#
#   scripts/k8s/plane.sh start DIR   # about 12 s; writes DIR/plane.env
#   scripts/k8s/plane.sh stop DIR    # stops each component by its pid
#   scripts/k8s/plane.sh start DIR --api-only [--authentication-config FILE]
#                        [--authorization-config FILE]
#       # etcd and kube-apiserver alone (a few seconds), the API server
#       # trusting the JWT issuers FILE names besides its own tokens, and
#       # asking the authorizers the other FILE names (instead of RBAC alone)
#
# DIR/plane.env holds, as shell assignments: K8S_API (https://127.0.0.1:PORT),
# K8S_CA (the CA file), K8S_TOKEN_FILE (a system:masters bearer token, in a
# file only), KUBECONFIG, K8S_AUDIT_LOG, K8S_BIN (kubectl and the rest).
# Kueue v0.17 reads its metrics certificate from /etc/kueue/metrics/certs
# whatever it is told: start writes it there, stop removes it (root only).
set -euo pipefail
cmd="${1:?usage: plane.sh start|stop DIR}"
run="$(mkdir -p "${2:?usage: plane.sh start|stop DIR}" && cd "$2" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
components=(kueue kwok kube-scheduler kube-controller-manager kube-apiserver etcd)

stop() {
  # Kueue's certificates in /etc are this plane's only if it ran Kueue (an
  # API-only plane beside a full one must leave them).
  local had_kueue=0
  [[ -f "$run/kueue.pid" ]] && had_kueue=1
  for n in "${components[@]}"; do
    [[ -f "$run/$n.pid" ]] && kill "$(cat "$run/$n.pid")" 2> /dev/null || true
  done
  for _ in $(seq 50); do
    alive=0
    for n in "${components[@]}"; do
      [[ -f "$run/$n.pid" ]] && kill -0 "$(cat "$run/$n.pid")" 2> /dev/null && alive=1
    done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  for n in "${components[@]}"; do
    [[ -f "$run/$n.pid" ]] && { kill -9 "$(cat "$run/$n.pid")" 2> /dev/null || true; rm -f "$run/$n.pid"; }
  done
  if ((had_kueue)); then
    rm -rf /etc/kueue/metrics/certs
    rmdir /etc/kueue/metrics /etc/kueue 2> /dev/null || true
  fi
}
if [[ "$cmd" == stop ]]; then stop; exit 0; fi
[[ "$cmd" == start ]] || { echo "usage: plane.sh start|stop DIR" >&2; exit 2; }
api_only=0
authn=()
authz=(--authorization-mode=RBAC)
shift 2
while (($#)); do
  case "$1" in
    --api-only) api_only=1 ;;
    --authentication-config) authn+=(--authentication-config="$(realpath "${2:?a file}")"); shift ;;
    --authorization-config) authz=(--authorization-config="$(realpath "${2:?a file}")"); shift ;;
    *) echo "plane.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# A fresh plane each time: what an earlier one left in DIR goes.
stop
rm -rf "$run/etcd-data" "$run/pki" "$run"/*-certs "$run/plane.env" "$run/audit.log"
peers="$("$here/peers.sh")"
bin="$peers/bin"
trap 'echo "plane.sh: start failed; logs in $run" >&2; stop' ERR

free_ports() {  # free_ports N: N ports nothing listens on now
  python3 -c 'import socket,sys
s=[socket.socket() for _ in range(int(sys.argv[1]))]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}
read -r etcd_port etcd_peer api_port kcm_port sched_port kueue_port kueue_health < <(free_ports 7)
api="https://127.0.0.1:$api_port"

started() { "$@" > /dev/null 2>&1; }
wait_for() {  # wait_for WHAT SECONDS cmd...
  local what=$1 limit=$2; shift 2
  local end=$((SECONDS + limit))
  until started "$@"; do
    if ((SECONDS >= end)); then echo "plane.sh: $what not ready after ${limit}s" >&2; return 1; fi
    sleep 0.2
  done
}
launch() {  # launch NAME cmd...: in the background, its log and pid in DIR
  local n=$1; shift
  "$@" > "$run/$n.log" 2>&1 &
  echo $! > "$run/$n.pid"
}

# PKI: a CA, the API server's and Kueue's webhook certificates, the
# service-account key pair, an admin token (random, in a file).
pki="$run/pki"
mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 7 -subj /CN=causeway-test-ca 2> /dev/null
cert() {  # cert NAME CN SAN
  openssl req -newkey rsa:2048 -nodes -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "/CN=$2" 2> /dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" > "$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 7 \
    -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2> /dev/null
}
cert apiserver kube-apiserver "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
cert kueue-webhook kueue-webhook "IP:127.0.0.1,DNS:localhost"
openssl genrsa -out "$pki/sa.key" 2048 2> /dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2> /dev/null
(umask 077; openssl rand -hex 24 > "$pki/admin.token")
echo "$(cat "$pki/admin.token"),admin,admin-uid,system:masters" > "$pki/tokens.csv"
chmod 600 "$pki/tokens.csv" "$pki"/*.key
cat > "$run/kubeconfig" << KC
apiVersion: v1
kind: Config
clusters:
- name: plane
  cluster: {server: "$api", certificate-authority: "$pki/ca.crt"}
users:
- name: admin
  user: {tokenFile: "$pki/admin.token"}
contexts:
- name: plane
  context: {cluster: plane, user: admin}
current-context: plane
KC
kc() { "$bin/kubectl" --kubeconfig "$run/kubeconfig" "$@"; }

# What the API server writes to its audit log: who touched Jobs, pods,
# Secrets (metadata only: never a Secret's data) and RBAC objects.
cat > "$run/audit-policy.yaml" << 'AP'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-scheduler", "system:kube-controller-manager", "system:apiserver"]
  verbs: [get, list, watch]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: Request
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - {group: batch, resources: [jobs]}
  - {group: "", resources: [pods, services, namespaces]}
  - {group: rbac.authorization.k8s.io}
  - {group: kueue.x-k8s.io}
- level: Metadata
  verbs: [get, list]
  resources:
  - {group: batch, resources: [jobs]}
  - {group: "", resources: [pods, pods/log]}
  - {group: kueue.x-k8s.io, resources: [workloads]}
- level: None
AP

launch etcd "$bin/etcd" --name plane --data-dir "$run/etcd-data" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-cluster "plane=http://127.0.0.1:$etcd_peer" --unsafe-no-fsync --log-level warn
wait_for etcd 30 curl -sf "http://127.0.0.1:$etcd_port/health"

launch kube-apiserver "$bin/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$etcd_port" --bind-address=127.0.0.1 --secure-port="$api_port" \
  --advertise-address=127.0.0.1 --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" --token-auth-file="$pki/tokens.csv" "${authz[@]}" \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$pki/sa.pub" \
  --service-account-signing-key-file="$pki/sa.key" --service-cluster-ip-range=10.0.0.0/24 \
  --endpoint-reconciler-type=none --cert-dir="$run/apiserver-certs" --profiling=false \
  --audit-policy-file="$run/audit-policy.yaml" --audit-log-path="$run/audit.log" --audit-log-format=json "${authn[@]}"
wait_for kube-apiserver 120 curl -sf --cacert "$pki/ca.crt" -H "Authorization: Bearer $(cat "$pki/admin.token")" "$api/readyz"

write_env() {
  cat > "$run/plane.env" << ENV
K8S_API=$api
K8S_CA=$pki/ca.crt
K8S_TOKEN_FILE=$pki/admin.token
KUBECONFIG=$run/kubeconfig
K8S_AUDIT_LOG=$run/audit.log
K8S_BIN=$bin
ENV
}
if ((api_only)); then
  write_env
  trap - ERR
  echo "API server up: $api (DIR/plane.env)" >&2
  exit 0
fi

launch kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$run/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$kcm_port" --cert-dir="$run/kcm-certs" \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
  --use-service-account-credentials=false --leader-elect=false --controllers='*'
launch kube-scheduler "$bin/kube-scheduler" --kubeconfig="$run/kubeconfig" --bind-address=127.0.0.1 \
  --secure-port="$sched_port" --cert-dir="$run/sched-certs" --leader-elect=false

# KWOK: fake nodes (those annotated kwok.x-k8s.io/node=fake) become Ready
# (KWOK's own node stages); their pods run and end as kwok-stages.yaml says.
stages="$peers/kwok/stage"
{
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-delete.yaml; do
    echo '---'
    cat "$stages/$f"
  done
  echo '---'
  cat "$here/kwok-stages.yaml"
} > "$run/kwok-stages.yaml"
launch kwok "$bin/kwok" --kubeconfig="$run/kubeconfig" -c "$run/kwok-stages.yaml" --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --node-lease-duration-seconds=40 \
  --cidr=127.10.0.0/16 --node-ip=127.0.0.1
wait_for "the default service account" 60 kc -n default get serviceaccount default
wait_for kube-scheduler 60 curl -skf "https://127.0.0.1:$sched_port/healthz"

# Kueue: its CRDs as shipped, its webhooks (Jobs and its own kinds) on a
# loopback URL with this plane's CA, no certificate manager.
kc create namespace kueue-system > /dev/null
kc apply --server-side -f "$peers/kueue/crd/bases" > /dev/null
kc wait --for condition=established --timeout=60s crd --all > /dev/null
python3 - "$peers/kueue/webhook/manifests.yaml" "$pki/ca.crt" "$kueue_port" > "$run/kueue-webhooks.yaml" << 'PY'
import base64, sys, yaml
manifests, ca, port = sys.argv[1:]
bundle = base64.b64encode(open(ca, "rb").read()).decode()
docs = []
for d in yaml.safe_load_all(open(manifests)):
    if not d:
        continue
    d["metadata"]["name"] = "kueue-" + d["metadata"]["name"]
    kept = []
    for w in d["webhooks"]:
        if {g for r in w["rules"] for g in r["apiGroups"]} <= {"batch", "kueue.x-k8s.io"}:
            w["clientConfig"] = {"url": f"https://127.0.0.1:{port}{w['clientConfig']['service']['path']}", "caBundle": bundle}
            kept.append(w)
    d["webhooks"] = kept
    docs.append(d)
print(yaml.safe_dump_all(docs))
PY
mkdir -p "$run/kueue-certs" /etc/kueue/metrics/certs
cp "$pki/kueue-webhook.crt" "$run/kueue-certs/tls.crt"
cp "$pki/kueue-webhook.key" "$run/kueue-certs/tls.key"
cp "$run/kueue-certs"/tls.* /etc/kueue/metrics/certs/
cat > "$run/kueue-config.yaml" << KQ
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:$kueue_health"}
metrics: {bindAddress: "0"}
webhook: {port: $kueue_port, host: 127.0.0.1, certDir: "$run/kueue-certs"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
integrations: {frameworks: ["batch/job"]}
KQ
launch kueue "$bin/kueue" --config="$run/kueue-config.yaml" --feature-gates=VisibilityOnDemand=false \
  --kubeconfig="$run/kubeconfig"
wait_for "kueue" 90 curl -sf "http://127.0.0.1:$kueue_health/readyz"
wait_for "kueue's webhook" 30 bash -c "echo > /dev/tcp/127.0.0.1/$kueue_port"
kc apply -f "$run/kueue-webhooks.yaml" > /dev/null

write_env
trap - ERR
echo "plane up: $api (DIR/plane.env)" >&2
