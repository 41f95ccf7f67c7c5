#!/usr/bin/env bash
# Stops a server started by scripts/postgres/up.sh by its recorded pid (a
# fast shutdown: SIGINT, then SIGKILL after 10 s). Zombies count as stopped.
# Usage: scripts/postgres/down.sh BASE
set -uo pipefail
base=$(realpath -m "${1:?usage: down.sh BASE}")
pidfile="$base/run/postgres.pid"
[[ -f "$pidfile" ]] || exit 0
pid=$(cat "$pidfile")
alive() { [[ -r /proc/$1/stat ]] && [[ "$(awk '{print $3}' /proc/$1/stat)" != "Z" ]]; }
# setsid ran runuser (as root) or postgres itself; signal the whole session.
kill -INT -- -"$pid" 2>/dev/null || kill -INT "$pid" 2>/dev/null
for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
alive "$pid" && kill -KILL -- -"$pid" 2>/dev/null
rm -f "$pidfile"
exit 0
