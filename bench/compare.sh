#!/usr/bin/env bash
# Compares two commits on the chosen benchmarks, side by side in one run:
# builds each (release, benchmarks on; kept under $CAUSEWAY_BENCH_BUILDS,
# default ~/.cache/causeway/bench-builds/SHA, and reused), then runs each
# benchmark ROUNDS times per side, alternated (OLD then NEW in even rounds,
# NEW then OLD in odd ones, so a machine that speeds up or slows down over
# the run favours neither), recording every run's figures (bench/record.sh).
# Prints, per figure, each side's median and NEW/OLD; writes every figure to
# OUT (default bench-compare-OLD-NEW.jsonl in the current directory).
#
#   bench/compare.sh OLD NEW [BENCH...]        (ROUNDS=4 OUT=... in the environment)
#
# BENCH: submit (the default), schedule, plan, forecast, reaper,
# audit_verify, service. The harness (these scripts, the load generator's
# arguments) is this checkout's; each side runs its own build's binaries.
set -euo pipefail
old_ref="${1:?usage: bench/compare.sh OLD NEW [BENCH...]}"
new_ref="${2:?usage: bench/compare.sh OLD NEW [BENCH...]}"
shift 2
benches=("$@")
[[ ${#benches[@]} -gt 0 ]] || benches=(submit)
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${ROUNDS:-4}"
builds="${CAUSEWAY_BENCH_BUILDS:-$HOME/.cache/causeway/bench-builds}"
shared="${CAUSEWAY_SHARED_DATA:-$root/../shared/data}"
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "ROUNDS is 1-99, got $rounds" >&2; exit 2; }

old=$(git -C "$root" rev-parse --verify "$old_ref^{commit}")
new=$(git -C "$root" rev-parse --verify "$new_ref^{commit}")
out="${OUT:-$PWD/bench-compare-${old:0:12}-${new:0:12}.jsonl}"
rm -f "$out"

# One commit's release build, made once: its tree exported (no worktree to
# clean up), configured and built; a build that failed is made again.
build() {
  local sha=$1 dir="$builds/$1"
  if [[ -x "$dir/build/causeway" && -f "$dir/build/.complete" ]]; then echo "$dir/build"; return; fi
  echo "building ${sha:0:12} in $dir (once)" >&2
  rm -rf "$dir" && mkdir -p "$dir/src"
  git -C "$root" archive "$sha" | tar -x -C "$dir/src"
  cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DCAUSEWAY_TESTS=OFF -DCAUSEWAY_BENCH=ON >&2
  cmake --build "$dir/build" -j "$(nproc)" >&2
  touch "$dir/build/.complete"
  echo "$dir/build"
}

# The command of one benchmark against one build.
command_of() {
  local bench=$1 b=$2
  case "$bench" in
    submit) echo "$root/bench/submit/run.sh $b" ;;
    schedule) echo "env CAUSEWAY_SHARED_DATA=$shared $b/bench/schedule_bench" ;;
    plan) echo "env CAUSEWAY_SHARED_DATA=$shared $b/bench/plan_bench" ;;
    forecast) echo "$b/bench/forecast_bench 300 $root/examples" ;;
    reaper) echo "$b/bench/reaper_bench" ;;
    audit_verify) echo "$b/bench/verify_bench 1000000" ;;
    service) echo "$root/bench/service/run.sh $b" ;;
    *) echo "unknown benchmark $bench: expected submit, schedule, plan, forecast, reaper, audit_verify or service" >&2
       return 2 ;;
  esac
}
for bench in "${benches[@]}"; do command_of "$bench" /nowhere > /dev/null; done

old_build=$(build "$old")
new_build=$(build "$new")
run() {
  local sha=$1 b=$2 bench=$3 cmd
  cmd=$(command_of "$bench" "$b")
  echo "== $bench on ${sha:0:12}" >&2
  # shellcheck disable=SC2086  # the command is words on purpose
  CAUSEWAY_BENCH_OUT="$out" CAUSEWAY_BENCH_COMMIT="$sha" "$root/bench/record.sh" "$bench" $cmd >&2
}
for ((round = 0; round < rounds; ++round)); do
  for bench in "${benches[@]}"; do
    if ((round % 2 == 0)); then
      run "$old" "$old_build" "$bench"; run "$new" "$new_build" "$bench"
    else
      run "$new" "$new_build" "$bench"; run "$old" "$old_build" "$bench"
    fi
  done
done

python3 - "$out" "$old" "$new" <<'PY'
import json, statistics, sys
path, old, new = sys.argv[1:]
values = {}
for line in open(path, encoding="utf-8"):
    r = json.loads(line)
    if not r["unit"] or r["figure"].split(".")[-1].startswith("target"):
        continue  # a setting or a target echoed back (clients, jobs, target_ms), not a measurement
    values.setdefault((r["benchmark"], r["figure"], r["unit"]), {}).setdefault(r["commit"], []).append(r["value"])
print(f"{'benchmark':28} {'figure':40} {'unit':6} {'old ' + old[:9]:>14} {'new ' + new[:9]:>14} {'new/old':>8} runs")
for (bench, figure, unit), by in sorted(values.items()):
    a, b = by.get(old, []), by.get(new, [])
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    ratio = f"{mb / ma:.3f}" if ma else "-"
    print(f"{bench:28} {figure:40} {unit:6} {ma:14.4g} {mb:14.4g} {ratio:>8} {len(a)}+{len(b)}")
print("(new/old above 1: more of it on NEW; better for 1/s, worse for s, ms, us and MB)")
print(f"every run's figures: {path}")
PY
