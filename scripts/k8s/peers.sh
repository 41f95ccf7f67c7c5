#!/usr/bin/env bash
# Makes sure the Kubernetes test peers are in their cache outside the
# repository, at the pinned versions: kube-apiserver, kube-controller-manager,
# kube-scheduler and kubectl v1.37.2 (k8s.io/kubernetes and its staging
# modules at v0.37.2), etcd v3.7.3, KWOK v0.8.0 and Kueue v0.17.0, with the
# manifests they need (Kueue's CRDs and webhooks, KWOK's stages).
#
# Taken from the prebuilt tarball in $CAUSEWAY_K8S_TARBALL_DIR (default
# ../shared/k8s beside the repository) after checking its checksum and each
# binary's; without the tarball, built from the Go module proxy (about 30
# minutes on 2 cores, once). Prints the cache directory on success.
#
# Usage: scripts/k8s/peers.sh           # ensure, print the directory
#        scripts/k8s/peers.sh --check   # exit 0 only if the cache is complete
set -euo pipefail

VERSION=v1.37.2
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${CAUSEWAY_K8S_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway/k8s-peers-$VERSION}"
tarballs="${CAUSEWAY_K8S_TARBALL_DIR:-$repo/../shared/k8s}"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kueue kwok)

complete() {
  [[ -f "$cache/.verified" ]] || return 1
  for b in "${bins[@]}"; do [[ -x "$cache/bin/$b" ]] || return 1; done
  [[ -d "$cache/kueue/crd/bases" && -f "$cache/kueue/webhook/manifests.yaml" && -d "$cache/kwok/stage" ]]
}

if [[ "${1:-}" == "--check" ]]; then complete; exit; fi
if complete; then echo "$cache"; exit 0; fi

mkdir -p "$cache"
tarball="$tarballs/k8s-peers-$VERSION.tar.xz"
if [[ -f "$tarball" && -f "$tarballs/SHA256SUMS.tar" && -f "$tarballs/SHA256SUMS.bin" ]]; then
  echo "checking and unpacking $tarball into $cache" >&2
  (cd "$tarballs" && sha256sum --quiet -c SHA256SUMS.tar) || { echo "$tarball: checksum mismatch" >&2; exit 1; }
  tar -xJf "$tarball" --strip-components=1 -C "$cache"
  (cd "$cache/bin" && sha256sum --quiet -c "$tarballs/SHA256SUMS.bin") ||
    { echo "$cache/bin: a binary does not match SHA256SUMS.bin" >&2; exit 1; }
else
  echo "no prebuilt peers in $tarballs: building them from the Go module proxy into $cache (slow, once)" >&2
  "$here/build-peers.sh" "$cache"
fi
touch "$cache/.verified"
complete || { echo "$cache: the peers are incomplete after unpacking" >&2; exit 1; }
echo "$cache"
