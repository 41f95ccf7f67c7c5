#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang and runs each for a while.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   Every target by default. First each input in fuzz/regressions/TARGET/
#   (inputs that once crashed) runs once, then the fuzzer runs SECONDS from
#   the seeds in fuzz/corpus/TARGET/ (new inputs go to build/fuzz/corpus/,
#   not into the repository). Exits non-zero on any crash, leak or timeout,
#   leaving the input in build/fuzz/artifacts/.
# FUZZ_JOBS targets run at a time (default: the number of cores). FUZZ_RUNS,
# when set, also ends each target after that many executions (whichever of
# the two limits comes first).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
build=build/fuzz
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCAUSEWAY_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
cmake --build "$build" -j "$(nproc)" > "$build.log" 2>&1 || { tail -50 "$build.log"; exit 1; }

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for f in fuzz/*.cc; do targets+=("$(basename "$f" .cc)"); done
fi
mkdir -p "$build/artifacts" "$build/logs"

run_one() {
  local t="$1" bin="$build/fuzz/fuzz_$1" log="$build/logs/$1.log"
  if [[ -d "fuzz/regressions/$t" ]] && compgen -G "fuzz/regressions/$t/*" > /dev/null; then
    if ! "$bin" -runs=0 fuzz/regressions/"$t"/* > "$log.regressions" 2>&1; then
      echo "fuzz $t: a regression input crashes again (see $log.regressions)"
      tail -30 "$log.regressions"
      return 1
    fi
  fi
  mkdir -p "$build/corpus/$t"
  local seeds=()
  [[ -d "fuzz/corpus/$t" ]] && seeds+=("fuzz/corpus/$t")
  local limits=(-max_total_time="$seconds")
  [[ -n "${FUZZ_RUNS:-}" ]] && limits+=(-runs="$FUZZ_RUNS")
  if ! "$bin" "${limits[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 \
       "$build/corpus/$t" "${seeds[@]}" > "$log" 2>&1; then
    echo "fuzz $t: FAILED (input in $build/artifacts/, log $log)"
    grep -E "ERROR|SUMMARY|runtime error" "$log" | head -10
    return 1
  fi
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  local took
  took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || echo "$seconds")
  echo "fuzz $t: ${execs} executions in ${took}s, no crash"
}

jobs="${FUZZ_JOBS:-$(nproc)}"
failed=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [[ ${#pids[@]} -ge $jobs ]]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
passed=$(( ${#targets[@]} ))
if [[ $failed -ne 0 ]]; then
  echo "fuzzing found a crash"
  exit 1
fi
echo "fuzzing: ${passed} targets, no crash"
