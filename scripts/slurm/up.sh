#!/usr/bin/env bash
# Brings up a real single-node Slurm 22.05 cluster on 127.0.0.1 for tests and
# benchmarks: munged, MariaDB and slurmdbd (accounting), slurmctld, slurmd (8
# fake H200 GPUs) and slurmrestd (REST API v0.0.38 and dbv0.0.38, JWT auth). Everything lives under BASE, so several
# clusters can run side by side; daemons run detached and their pids are in
# BASE/run/*.pid for scripts/slurm/down.sh.
#
# Usage: scripts/slurm/up.sh BASE [CLUSTER_NAME]
# Writes BASE/env (shell syntax): SLURM_CONF, CAUSEWAY_SLURM_URL,
# CAUSEWAY_SLURM_USER, CAUSEWAY_SLURM_TOKEN_FILE, CAUSEWAY_SLURM_PARTITION.
set -euo pipefail
base=$(realpath -m "${1:?usage: up.sh BASE [CLUSTER_NAME]}")
name=${2:-causeway$RANDOM}
for tool in munged slurmctld slurmd slurmrestd slurmdbd mariadbd mariadb-install-db scontrol sacct; do
  command -v "$tool" >/dev/null || { echo "up.sh: $tool is not installed (scripts/install-deps.sh test)" >&2; exit 2; }
done

mkdir -p "$base"/{etc,run,log,spool/ctld,spool/d,dev,out,mysql}
chmod 0755 "$base" "$base/run"           # the munge socket's directory must be world-executable
chmod 1777 "$base/out"                    # job output, written as the submitting user
for i in 0 1 2 3 4 5 6 7; do ln -sf /dev/null "$base/dev/nvidia$i"; done
# slurmrestd runs as user slurm and needs the munge socket under BASE.
if ! runuser -u slurm -- test -x "$base/run"; then
  echo "up.sh: user slurm cannot reach $base: make every directory above it world-executable" >&2
  exit 2
fi

# Ports: free ones, chosen by the kernel.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
ctld_port=$(free_port); slurmd_port=$(free_port); rest_port=$(free_port); dbd_port=$(free_port); db_port=$(free_port)
db_pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')

dd if=/dev/urandom of="$base/etc/munge.key" bs=1024 count=1 status=none
chmod 0400 "$base/etc/munge.key"
dd if=/dev/urandom of="$base/etc/jwt_hs256.key" bs=32 count=1 status=none
chown slurm "$base/etc/jwt_hs256.key" 2>/dev/null || true
chmod 0400 "$base/etc/jwt_hs256.key"

cat > "$base/etc/slurm.conf" <<CONF
ClusterName=$name
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$base/run/munge.socket
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$base/etc/jwt_hs256.key
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$base/spool/ctld
SlurmdSpoolDir=$base/spool/d
SlurmctldPidFile=$base/run/slurmctld.pidfile
SlurmdPidFile=$base/run/slurmd.pidfile
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MailProg=/bin/true
ReturnToService=2
MinJobAge=${SLURM_MIN_JOB_AGE:-300}
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
AccountingStoragePass=$base/run/munge.socket
AccountingStorageTRES=gres/gpu,gres/gpu:h200
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=16 RealMemory=64000 Gres=gpu:h200:8 State=UNKNOWN
PartitionName=gpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$base/etc/gres.conf" <<CONF
AutoDetect=off
NodeName=localhost Name=gpu Type=h200 File=$base/dev/nvidia[0-7]
CONF
# slurmdbd reads slurmdbd.conf next to slurm.conf; it holds a password, so 0600.
cat > "$base/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$base/run/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$base/etc/jwt_hs256.key
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
CommunicationParameters=NoInAddrAny
SlurmUser=root
PidFile=$base/run/slurmdbd.pidfile
LogFile=$base/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=$db_pass
StorageLoc=slurm_acct_db
CONF
chmod 0600 "$base/etc/slurmdbd.conf"
export SLURM_CONF="$base/etc/slurm.conf"

start() {  # start NAME CMD...: detached, pid recorded
  local what=$1; shift
  setsid "$@" > "$base/log/$what.out" 2>&1 < /dev/null &
  echo $! > "$base/run/$what.pid"
}
wait_for() {  # wait_for WHAT CMD...: up to 10 s
  local what=$1; shift
  for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "up.sh: $what did not come up; logs in $base/log" >&2; tail -n 5 "$base/log/"*.log "$base/log/"*.out >&2 || true; exit 1
}

start munged munged -F --socket="$base/run/munge.socket" --key-file="$base/etc/munge.key" \
  --pid-file="$base/run/munged.pidfile" --seed-file="$base/run/munge.seed" --log-file="$base/log/munged.log" --force
wait_for munged test -S "$base/run/munge.socket"
mariadb-install-db --no-defaults --datadir="$base/mysql" --user=root --auth-root-authentication-method=normal \
  --skip-test-db > "$base/log/mariadb-install.out" 2>&1
start mariadbd mariadbd --no-defaults --datadir="$base/mysql" --socket="$base/run/mysql.sock" --port="$db_port" \
  --bind-address=127.0.0.1 --user=root --skip-name-resolve --pid-file="$base/run/mariadbd.pidfile"
wait_for mariadbd mariadb --no-defaults -S "$base/run/mysql.sock" -u root -e 'select 1'
mariadb --no-defaults -S "$base/run/mysql.sock" -u root -e \
  "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$db_pass'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
start slurmdbd slurmdbd -D
wait_for slurmdbd sacctmgr -n list cluster
sacctmgr -i add cluster "$name" > /dev/null
start slurmctld slurmctld -D -i
wait_for slurmctld scontrol ping
start slurmd slurmd -D -N localhost
wait_for slurmd bash -c "scontrol show node localhost | grep -qE 'State=(IDLE|MIXED|ALLOCATED)'"
start slurmrestd env SLURM_JWT=daemon slurmrestd -u slurm -a rest_auth/jwt -s openapi/v0.0.38,openapi/dbv0.0.38 "127.0.0.1:$rest_port"

# A token for the tests: the REST API's own credentials.
scontrol token username=root lifespan=86400 | sed 's/^SLURM_JWT=//' > "$base/etc/token"
chmod 0600 "$base/etc/token"
wait_for slurmrestd curl -sf -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $(cat "$base/etc/token")" \
  "http://127.0.0.1:$rest_port/slurm/v0.0.38/ping"

cat > "$base/env" <<ENV
export SLURM_CONF=$base/etc/slurm.conf
export CAUSEWAY_SLURM_URL=http://127.0.0.1:$rest_port
export CAUSEWAY_SLURM_USER=root
export CAUSEWAY_SLURM_TOKEN_FILE=$base/etc/token
export CAUSEWAY_SLURM_PARTITION=gpu
ENV
echo "slurm cluster $name up: controller 127.0.0.1:$ctld_port, REST http://127.0.0.1:$rest_port (env in $base/env)"
