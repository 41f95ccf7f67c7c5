#!/usr/bin/env bash
# Builds the Kubernetes test peers from the Go module proxy into DIR (bin/,
# kueue/, kwok/): what scripts/k8s/peers.sh does when no prebuilt tarball is
# at hand. About 30 minutes on 2 cores cold, 1.8 GB of module cache; a
# minute with warm caches. Needs Go 1.26 (on PATH or in /usr/local/go).
#
# k8s.io/kubernetes' module leaves out staging/: the go.mod written here
# replaces each staging module it requires at v0.0.0 with the published
# v0.37.2 of it.
# Usage: scripts/k8s/build-peers.sh DIR
set -euo pipefail
out="$1"
KV=v1.37.2
export PATH="$PATH:/usr/local/go/bin"
export GOFLAGS="${GOFLAGS:--buildvcs=false -p=2}"
command -v go > /dev/null || { echo "build-peers: Go is not installed" >&2; exit 1; }
src="$out/src"
mkdir -p "$out/bin" "$src"/{kube,etcd,kwok,kueue}

module() {  # module DIR NAME TOOL REQUIRE VERSION
  [[ -f "$src/$1/go.mod" ]] && return
  printf 'module causeway-peers/%s\n\ngo 1.26.0\n\ntool %s\n\nrequire %s %s\n' "$2" "$3" "$4" "$5" > "$src/$1/go.mod"
  (cd "$src/$1" && go mod tidy)
}
if [[ ! -f "$src/kube/go.mod" ]]; then
  go mod download "k8s.io/kubernetes@$KV"
  upstream="$(go env GOMODCACHE)/k8s.io/kubernetes@$KV/go.mod"
  {
    printf 'module causeway-peers/kube\n\ngo 1.26.0\n\ngodebug default=go1.26\n\ntool (\n'
    for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do printf '\tk8s.io/kubernetes/cmd/%s\n' "$c"; done
    printf ')\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KV"
    grep -E '^\s+k8s.io/[a-z-]+ v0.0.0$' "$upstream" | awk -v v="v0${KV#v1}" '{printf "\t%s => %s %s\n", $1, $1, v}'
    printf ')\n'
  } > "$src/kube/go.mod"
  (cd "$src/kube" && go mod tidy)
fi
module etcd etcd go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3 v3.7.3
module kwok kwok sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok v0.8.0
module kueue kueue sigs.k8s.io/kueue/cmd/kueue sigs.k8s.io/kueue v0.17.0

build() {  # build DIR BINARY PACKAGE [ldflags]
  [[ -x "$out/bin/$2" ]] && return
  echo "building $2" >&2
  (cd "$src/$1" && go build -ldflags="-s -w ${4:-}" -o "$out/bin/$2" "$3")
}
kver="-X k8s.io/component-base/version.gitVersion=$KV -X k8s.io/component-base/version.gitMajor=1"
kver+=" -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"
kver+=" -X k8s.io/client-go/pkg/version.gitVersion=$KV -X k8s.io/client-go/pkg/version.gitMajor=1"
kver+=" -X k8s.io/client-go/pkg/version.gitMinor=37"
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do build kube "$c" "k8s.io/kubernetes/cmd/$c" "$kver"; done
build etcd etcd go.etcd.io/etcd/server/v3
build kwok kwok sigs.k8s.io/kwok/cmd/kwok
build kueue kueue sigs.k8s.io/kueue/cmd/kueue "-X sigs.k8s.io/kueue/pkg/version.GitVersion=v0.17.0"

modcache="$(go env GOMODCACHE)"
mkdir -p "$out/kueue" "$out/kwok"
cp -r "$modcache/sigs.k8s.io/kueue@v0.17.0/config/components/crd" "$out/kueue/"
cp -r "$modcache/sigs.k8s.io/kueue@v0.17.0/config/components/webhook" "$out/kueue/"
cp -r "$modcache/sigs.k8s.io/kwok@v0.8.0/kustomize/stage" "$out/kwok/"
chmod -R u+w "$out/kueue" "$out/kwok"
