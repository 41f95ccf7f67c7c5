#!/usr/bin/env bash
# Stops a cluster started by scripts/slurm/up.sh: cancels its jobs, then
# stops slurmrestd, slurmd, slurmctld, slurmdbd, MariaDB and munged by their recorded pids
# (TERM, then KILL after 5 s). Zombies count as stopped.
# Usage: scripts/slurm/down.sh BASE
set -uo pipefail
base=$(realpath -m "${1:?usage: down.sh BASE}")
[[ -f "$base/etc/slurm.conf" ]] && SLURM_CONF="$base/etc/slurm.conf" scancel --quiet --full --user=root 2>/dev/null
alive() { [[ -r /proc/$1/stat ]] && [[ "$(awk '{print $3}' /proc/$1/stat)" != "Z" ]]; }
for what in slurmrestd slurmd slurmctld slurmdbd mariadbd munged; do
  pidfile="$base/run/$what.pid"
  [[ -f "$pidfile" ]] || continue
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null
  rm -f "$pidfile"
done
exit 0
