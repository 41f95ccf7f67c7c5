#!/usr/bin/env python3
"""Reads a benchmark's output on stdin, passes it through to stdout, and
appends its figures as JSON lines to OUT: one line per number in each JSON
object the benchmark printed on a line of its own.

    record.py NAME OUT COMMIT MACHINE

A line of OUT: {"benchmark", "figure", "value", "unit", "commit",
"machine", "at"}. "benchmark" is the object's own "bench" field when it has
one (plan_bench prints one object per case), else NAME; "figure" is the
number's path in the object ("managed.p99_ms"); the unit is read from the
name's words (per_s: 1/s; ms, us, s or seconds, mb; ratio or over: a
ratio; none of them: a count or setting). Arrays (each run's raw figures) are left out.
Output that is not a JSON object passes through untouched.
"""
import datetime
import json
import sys

MAX_LINE = 1 << 20  # a line longer than this is passed through, not parsed
MAX_DEPTH = 8


def unit_of(name):
    tokens = name.lower().rsplit(".", 1)[-1].split("_")
    if "per" in tokens and tokens[-1] == "s" or "rps" in tokens:
        return "1/s"
    for token, unit in (("ms", "ms"), ("us", "us"), ("mb", "MB"), ("mib", "MiB"), ("s", "s"), ("seconds", "s")):
        if token in tokens:
            return unit
    if "ratio" in tokens or "over" in tokens:
        return "ratio"
    return ""


def figures(obj, prefix="", depth=0):
    if depth > MAX_DEPTH:
        return
    for key, value in obj.items():
        path = prefix + str(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            yield path, value
        elif isinstance(value, dict):
            yield from figures(value, path + ".", depth + 1)


def main():
    if len(sys.argv) != 5:
        print("usage: record.py NAME OUT COMMIT MACHINE", file=sys.stderr)
        return 2
    name, out_path, commit, machine = sys.argv[1:]
    at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(out_path, "a", encoding="utf-8") as out:
        for line in sys.stdin:
            sys.stdout.write(line)
            sys.stdout.flush()
            text = line.strip()
            if not text.startswith("{") or len(text) > MAX_LINE:
                continue
            try:
                obj = json.loads(text)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            bench = obj.get("bench") if isinstance(obj.get("bench"), str) else name
            for figure, value in figures(obj):
                out.write(json.dumps({"benchmark": bench, "figure": figure, "value": value, "unit": unit_of(figure),
                                      "commit": commit, "machine": machine, "at": at}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
