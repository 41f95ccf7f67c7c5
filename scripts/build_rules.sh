#!/usr/bin/env bash
# Checks that the rules the build keeps really refuse what they forbid: each
# case is a few lines of C++ compiled (syntax only) with the flags of one
# library's own source in an existing build (its compile_commands.json). A
# case marked "refused" must fail to compile with the diagnostic named, and
# one marked "compiles" must compile (so a refusal is never an accident of
# the flags). docs/architecture.md explains each rule.
# Usage: scripts/build_rules.sh [BUILD_DIR]   (default build/asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/asan}"
db="$build/compile_commands.json"
[[ -f "$db" ]] || { echo "build rules: $db not found (build first)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The compile command of SOURCE, for syntax only, reading stdin as C++.
flags_of() {
  python3 - "$db" "$PWD/$1" <<'PY'
import json, shlex, sys
db, want = sys.argv[1], sys.argv[2]
for e in json.load(open(db)):
    if e["file"] != want:
        continue
    args = e.get("arguments") or shlex.split(e["command"])
    keep, skip = [args[0]], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ", "-c"):
            skip = a != "-c"
            continue
        if a in ("-MD", "-MMD") or a == e["file"]:
            continue
        keep.append(a)
    print("\0".join(keep), end="")
    sys.exit(0)
sys.exit("build rules: no compile command for " + want)
PY
}

failures=0
checked=0
# check VERDICT SOURCE PATTERN NAME: compiles the C++ on stdin as SOURCE's
# library would; VERDICT is "refused" (must fail, with PATTERN in the
# diagnostics) or "compiles".
check() {
  local verdict="$1" source="$2" pattern="$3" name="$4"
  local code="$work/case.cc" log="$work/case.log"
  cat > "$code"
  local -a cmd
  mapfile -d '' cmd < <(flags_of "$source")
  checked=$((checked + 1))
  if (cd "$build" && "${cmd[@]}" -fsyntax-only -x c++ "$code") > "$log" 2>&1; then
    if [[ "$verdict" == refused ]]; then
      echo "build rules: NOT REFUSED: $name" >&2
      failures=$((failures + 1))
    fi
  else
    if [[ "$verdict" == compiles ]]; then
      echo "build rules: DOES NOT COMPILE: $name" >&2
      sed -n 1,20p "$log" >&2
      failures=$((failures + 1))
    elif ! grep -Eq "$pattern" "$log"; then
      echo "build rules: refused for another reason than /$pattern/: $name" >&2
      sed -n 1,20p "$log" >&2
      failures=$((failures + 1))
    fi
  fi
}

# --- The launch protocol (providers/launch.h): hold, record, release. ---
launch_source=src/service/scheduler_records.cc
check compiles "$launch_source" "" "a recorded launch is released" <<'EOF'
#include "service/launch_record.h"
#include "causeway/provider.h"
void Go(causeway::ProviderAdapter& a, const causeway::LaunchRecord& record, const causeway::Status& commit) {
  if (auto r = record.Committed(commit); r.ok()) a.Release(*r);
}
EOF
check refused "$launch_source" "private" "a held launch made outside the engine" <<'EOF'
#include "causeway/launch.h"
causeway::HeldLaunch Forge() { return causeway::HeldLaunch("job", 1, "cluster"); }
EOF
check refused "$launch_source" "private" "a recorded launch made without its record" <<'EOF'
#include "causeway/launch.h"
causeway::RecordedLaunch Forge(const causeway::HeldLaunch& h) { return causeway::RecordedLaunch(h, {}); }
EOF
check refused "$launch_source" "private" "a credential minted without a written launch record" <<'EOF'
#include "service/launch_record.h"
void Go(const causeway::LaunchRecord& record) { (void)record.MintCredential({}, causeway::Timestamp()); }
EOF
check refused "$launch_source" "no matching function|cannot convert|could not convert" "a release by job and attempt alone" <<'EOF'
#include "causeway/provider.h"
void Go(causeway::ProviderAdapter& a) { a.Release("job", 1, {}); }
EOF
check refused "$launch_source" "no matching function|cannot convert|could not convert" "a held launch released before it is recorded" <<'EOF'
#include "causeway/provider.h"
void Go(causeway::ProviderAdapter& a, const causeway::HeldLaunch& held) { a.Release(held); }
EOF

# --- The layers (cmake/layers.cmake): a library sees only what it declared. ---
check compiles src/spec/estate.cc "" "the spec sees core, its own headers and the controls catalog" <<'EOF'
#include "causeway/status.h"
#include "causeway/estate.h"
#include "spec/spec_json.h"
#include "readiness/catalog.h"
EOF
check refused src/core/status.cc "No such file" "core includes the store, above it" <<'EOF'
#include "causeway/store.h"
EOF
check refused src/spec/estate.cc "No such file" "the spec includes the scheduler, above it" <<'EOF'
#include "scheduler/engine.h"
EOF
check refused src/spec/estate.cc "No such file" "the spec includes readiness's evaluation, beside the catalog it may see" <<'EOF'
#include "readiness/evaluate.h"
EOF
check refused src/store/commit_queue.cc "No such file" "the store includes the audit importers, above it" <<'EOF'
#include "audit/ocsf.h"
EOF
check refused src/scheduler/engine.cc "No such file" "the engine includes the service that drives it" <<'EOF'
#include "service/scheduler_service.h"
EOF
check refused src/providers/registry.cc "No such file" "a provider includes the scheduler" <<'EOF'
#include "scheduler/engine.h"
EOF
check refused src/identity/tokens.cc "No such file" "identity includes the API" <<'EOF'
#include "api/api_service.h"
EOF

if (( failures > 0 )); then
  echo "build rules: $failures of $checked cases wrong" >&2
  exit 1
fi
echo "build rules: $checked cases as they must be"
