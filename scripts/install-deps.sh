#!/usr/bin/env bash
# Installs the Debian 12 packages Causeway needs to build and test, and only the
# ones that are missing, so running it again is cheap and changes nothing.
# Usage: scripts/install-deps.sh [build|test]
set -euo pipefail

build_pkgs=(
  g++ cmake make pkg-config
  libboost1.81-dev libssl-dev libsqlite3-dev sqlite3
  libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libspdlog-dev libfmt-dev curl libpq-dev zlib1g-dev
  # rclone moves and lists dataset objects (src/data/rclone.h), at run time.
  rclone
  # HAProxy serves services' endpoints (src/serving/haproxy.h), at run time.
  haproxy
)
test_pkgs=(
  libgtest-dev libgmock-dev python3
  # python3-venv: SkyPilot's own task parser, the reference the job spec is
  # compared with (tests/oracle), lives in a virtual environment.
  python3-venv
  # jq: the reference bench/audit_import compares against.
  jq
  # git: a job's git workdir is cloned by the real backends' scripts.
  git
  # openssl: the command checks provenance signatures as any verifier would.
  openssl
  # A real Slurm cluster for the Slurm adapter's tests (scripts/slurm/up.sh),
  # with accounting (slurmdbd on MariaDB).
  munge slurmctld slurmd slurm-client slurmrestd slurm-wlm-jwt-plugin
  slurmdbd slurm-wlm-mysql-plugin mariadb-server
  # A real PostgreSQL server for the store's tests (scripts/postgres/up.sh).
  postgresql
  # A real Prometheus (and promtool to back-fill it) for the telemetry tests.
  prometheus
  # clang and libFuzzer for the fuzz targets (scripts/fuzz.sh).
  clang-14 libclang-rt-14-dev
  # A real browser for the HTML reports (driven by playwright-core from npm).
  chromium
  # fuse3 lets rclone mount buckets (file_mounts MOUNT).
  fuse3
)

wanted=("${build_pkgs[@]}")
# Node.js and npm build the web console (console/, with esbuild from npm) and
# run the tests' peers, unless the machine has them.
command -v node > /dev/null || wanted+=(nodejs)
command -v npm > /dev/null || wanted+=(npm)
if [[ "${1:-build}" == "test" ]]; then
  wanted+=("${test_pkgs[@]}")
fi

missing=()
for p in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The identity tests' peers from npm (tests/peers): a real OpenID Connect
# provider and the jose verifier, at the versions package-lock.json pins.
if [[ "${1:-build}" == "test" ]]; then
  peers="$(dirname "$0")/../tests/peers"
  if [[ ! -f "$peers/node_modules/.package-lock.json" || "$peers/package-lock.json" -nt "$peers/node_modules/.package-lock.json" ]]; then
    echo "installing the test peers from npm (tests/peers)"
    (cd "$peers" && npm ci --no-audit --no-fund --silent)
  fi
fi

# SkyPilot's own task parser from PyPI, pinned, in a virtual environment
# outside the repository (kept between runs): the oracle the job spec tests
# compare with. Without the network the tests that need it skip, saying why.
if [[ "${1:-build}" == "test" ]]; then
  sky_venv="${CAUSEWAY_SKYPILOT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway/skypilot-0.14.1}"
  if [[ ! -x "$sky_venv/bin/python" ]] || ! "$sky_venv/bin/python" -c "import sky" 2> /dev/null; then
    echo "installing SkyPilot 0.14.1 from PyPI into $sky_venv (the job spec's reference parser)"
    if ! { python3 -m venv "$sky_venv" && "$sky_venv/bin/pip" install -q "skypilot==0.14.1"; }; then
      echo "warning: SkyPilot could not be installed; the tests that compare with it will skip" >&2
    fi
  fi
fi

# Two S3 servers on loopback for the dataset tests: moto's server mode from
# PyPI (tests/peers/s3/requirements.txt), in a virtual environment outside
# the repository. Without the network the tests that need it skip.
if [[ "${1:-build}" == "test" ]]; then
  moto_venv="${CAUSEWAY_MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway/moto-5.2.6}"
  if [[ ! -x "$moto_venv/bin/moto_server" ]]; then
    echo "installing moto 5.2.6 from PyPI into $moto_venv (the dataset tests' S3 servers)"
    if ! { python3 -m venv "$moto_venv" &&
           "$moto_venv/bin/pip" install -q -r "$(dirname "$0")/../tests/peers/s3/requirements.txt"; }; then
      echo "warning: moto could not be installed; the dataset tests that need S3 will skip" >&2
    fi
  fi
fi

# The official cloud SDKs (boto3, google-auth, azure-identity) from PyPI
# (tests/peers/cloud-sdks/requirements.txt), pinned, in a virtual environment
# outside the repository: what a job with federated identities runs. Without
# the network the tests that need them skip.
if [[ "${1:-build}" == "test" ]]; then
  sdk_venv="${CAUSEWAY_CLOUD_SDKS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway/cloud-sdks-1}"
  if [[ ! -x "$sdk_venv/bin/python" ]] || ! "$sdk_venv/bin/python" -c "import boto3, google.auth, azure.identity" 2> /dev/null; then
    echo "installing boto3, google-auth and azure-identity from PyPI into $sdk_venv (the federation tests' SDKs)"
    if ! { python3 -m venv "$sdk_venv" &&
           "$sdk_venv/bin/pip" install -q -r "$(dirname "$0")/../tests/peers/cloud-sdks/requirements.txt"; }; then
      echo "warning: the cloud SDKs could not be installed; the federation tests will skip" >&2
    fi
  fi
fi

# The Kubernetes test peers (kube-apiserver, etcd, the controller manager and
# scheduler, KWOK, Kueue) in a cache outside the repository: from the checked
# tarball in ../shared/k8s, or built from the Go module proxy (slow, once).
# Without them the Kubernetes tests fail, saying why; they never skip.
if [[ "${1:-build}" == "test" ]]; then
  if ! "$(dirname "$0")/k8s/peers.sh" > /dev/null; then
    echo "warning: the Kubernetes test peers could not be made ready (scripts/k8s/peers.sh)" >&2
  fi
fi
