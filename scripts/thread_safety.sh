#!/usr/bin/env bash
# Checks the locking rules the code states (causeway/mutex.h: GUARDED_BY,
# REQUIRES, EXCLUDES) with clang's -Wthread-safety analysis: each source file
# under src/ that holds or declares an annotated mutex (in it or in its own
# header; guarded members are private, so only their class's file touches
# them) is compiled for syntax only with the flags of an existing build (its
# compile_commands.json), and any violation fails.
# Usage: scripts/thread_safety.sh [BUILD_DIR]   (default build/asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/asan}"
db="$build/compile_commands.json"
[[ -f "$db" ]] || { echo "thread safety: $db not found (build first)" >&2; exit 1; }
clang="$(command -v clang++-14 || command -v clang++ || true)"
[[ -n "$clang" ]] || { echo "thread safety: clang++ not found (scripts/install-deps.sh test)" >&2; exit 1; }

# One line per source file of src/: the compile command, as clang runs it.
python3 - "$db" "$PWD/src/" "$clang" > "$build/thread_safety.cmds" <<'PY'
import json, os, re, shlex, sys
db, src, clang = sys.argv[1], sys.argv[2], sys.argv[3]
annotated = re.compile(r"\b(Mutex|MutexLock|GUARDED_BY|REQUIRES|EXCLUDES)\b")
def uses_annotations(path):
    for p in (path, os.path.splitext(path)[0] + ".h"):
        if os.path.exists(p) and annotated.search(open(p, errors="replace").read()):
            return True
    return False
for e in json.load(open(db)):
    if not e["file"].startswith(src) or not uses_annotations(e["file"]):
        continue
    args = e.get("arguments") or shlex.split(e["command"])
    keep, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-W") or a.startswith("-fsanitize"):
            continue
        keep.append(a)
    keep += ["-fsyntax-only", "-Wno-everything", "-Wthread-safety", "-Werror=thread-safety"]
    print(shlex.join(["cd", e["directory"]]) + " && " + shlex.join([clang] + keep))
PY
jobs="$(nproc)"
status=0
xargs -d '\n' -P "$jobs" -n 1 bash -c 'eval "$1" 2>&1' _ < "$build/thread_safety.cmds" || status=$?
if [[ $status -ne 0 ]]; then
  echo "thread safety: FAILED (clang -Wthread-safety found the errors above)" >&2
  exit 1
fi
echo "thread safety: $(wc -l < "$build/thread_safety.cmds") files checked, no violation"
