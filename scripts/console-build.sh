#!/usr/bin/env bash
# Builds the web console into OUTDIR (called by the CMake build): installs
# its build tools from npm when console/package-lock.json is newer than what
# is installed, then type-checks and bundles (console/build.mjs). Two build
# directories may run this at once: they take turns on one lock.
# Usage: scripts/console-build.sh OUTDIR
set -euo pipefail
out=${1:?usage: console-build.sh OUTDIR}
console="$(cd "$(dirname "$0")/../console" && pwd)"
exec 9> "$console/.build.lock"
flock 9
if [[ ! -f "$console/node_modules/.package-lock.json" || "$console/package-lock.json" -nt "$console/node_modules/.package-lock.json" ]]; then
  echo "installing the console's build tools from npm (console/package-lock.json)"
  (cd "$console" && npm ci --no-audit --no-fund --loglevel=error)
fi
node "$console/build.mjs" "$out"
