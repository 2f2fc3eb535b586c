#!/usr/bin/env bash
# The services the tests of the launcher recipes need
# (docs/tracestat.md#past-one-machine, tests/README.md#services): a
# one-node Slurm cluster on this machine (munged, slurmctld, slurmd), all
# state in one folder.
#
#   scripts/test-services.sh start    # start, or reuse one already running
#   scripts/test-services.sh status   # exit 0 when it answers and the node is up
#   scripts/test-services.sh stop     # stop the daemons (the folder stays)
#
# The folder is $UNITRACE_SLURM_DIR (default /tmp/unitrace-tools-slurm),
# machine-wide because Slurm's ports are: every checkout on this machine
# shares one cluster. Clients find it with SLURM_CONF=<folder>/slurm.conf
# (printed by `start`; the tests look there when SLURM_CONF is unset).
#
# `start` is idempotent: a cluster that answers with the configuration this
# script writes is reused; otherwise (daemons dead, stale pid files, a node
# down, a changed configuration) what is left is stopped and everything is
# started afresh. The configuration is the smallest that runs batch and
# array jobs as root without systemd or cgroups: proctrack/linuxproc,
# task/none, no accounting (so no sacct: job states are read with
# `squeue --states=all`, kept MinJobAge seconds after the end). It needs
# root (slurmd starts the jobs) and the Debian packages slurmctld, slurmd,
# slurm-client and munge, which scripts/test.sh installs; it prints one
# line saying why when it cannot start, and exits 1.
set -euo pipefail
state="${UNITRACE_SLURM_DIR:-/tmp/unitrace-tools-slurm}"
conf="$state/slurm.conf"
export SLURM_CONF="$conf"
say() { echo "test-services: $*" >&2; }

# The configuration for this machine: its name and CPUs.
write_conf() {
    local host cpus
    host="$(hostname -s)"
    cpus="$(nproc)"
    cat <<EOF
# Written by scripts/test-services.sh: a one-node cluster for the tests.
ClusterName=unitrace
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=kill_invalid_depend
ReturnToService=2
MinJobAge=3600
KillWait=5
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

# Process $1 runs and is daemon $2 (a zombie, killed but not yet reaped,
# does not count, nor another program that got the pid of a stale file).
running() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] || return 1
    stat="${stat##*) }"
    [ "${stat%% *}" != Z ]
}
# The daemon of pid file $1 (named after it: munged.pid -> munged) runs.
alive() { [ -s "$1" ] && running "$(cat "$1")" "$(basename "$1" .pid)"; }

# Exit 0 when the cluster answers with this script's configuration and its
# node takes jobs.
healthy() {
    [ -f "$conf" ] && [ "$(cat "$conf")" = "$(write_conf)" ] || return 1
    alive "$state/munged.pid" && alive "$state/slurmctld.pid" && alive "$state/slurmd.pid" || return 1
    timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP' || return 1
    timeout 10 scontrol show slurmd >/dev/null 2>&1 || return 1
    local node
    node="$(timeout 10 sinfo -h -N -o %t 2>/dev/null | head -n 1)"
    case "$node" in idle | mix | alloc | comp) return 0 ;; *) return 1 ;; esac
}

stop() {
    if alive "$state/slurmctld.pid"; then timeout 10 scontrol shutdown >/dev/null 2>&1 || true; fi
    if alive "$state/munged.pid"; then munged -s -S "$state/munge.socket" >/dev/null 2>&1 || true; fi
    local pidfile pid name i
    for pidfile in "$state"/slurmd.pid "$state"/slurmctld.pid "$state"/munged.pid; do
        alive "$pidfile" || continue
        pid="$(cat "$pidfile")" name="$(basename "$pidfile" .pid)"
        for ((i = 0; i < 50; i++)); do running "$pid" "$name" || break; sleep 0.1; done
        if running "$pid" "$name"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    rm -f "$state"/*.pid "$state/munge.socket" "$state/munge.socket.lock"
}

start() {
    local tool
    for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
        command -v "$tool" >/dev/null 2>&1 \
            || { say "$tool not found: apt-get install slurmctld slurmd slurm-client munge (scripts/test.sh does it)"; return 1; }
    done
    if healthy; then
        say "Slurm already running, reused (SLURM_CONF=$conf)"
        return 0
    fi
    stop
    # munged wants its socket's folder searchable by all and the key private.
    mkdir -p "$state/ctld" "$state/spool"
    chmod 755 "$state"
    [ -s "$state/munge.key" ] || mungekey --create --keyfile="$state/munge.key"
    chmod 600 "$state/munge.key"
    write_conf > "$conf.tmp" && mv "$conf.tmp" "$conf"
    munged --key-file="$state/munge.key" --socket="$state/munge.socket" \
        --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munged.seed" 9>&- \
        || { say "munged did not start: $(tail -n 1 "$state/munged.log" 2>/dev/null)"; return 1; }
    # The daemons must not inherit the lock (fd 9). -c: no jobs or node states of an earlier cluster in this folder.
    slurmctld -c -f "$conf" 9>&- || { say "slurmctld did not start: $(tail -n 2 "$state/slurmctld.log" 2>/dev/null)"; return 1; }
    slurmd -f "$conf" 9>&- || { say "slurmd did not start: $(tail -n 2 "$state/slurmd.log" 2>/dev/null)"; return 1; }
    local i
    for ((i = 0; i < 300; i++)); do
        healthy && { say "Slurm started (SLURM_CONF=$conf)"; return 0; }
        case "$(timeout 10 sinfo -h -N -o %t 2>/dev/null | head -n 1)" in
            down* | drain* | drng*) scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true ;;
        esac
        sleep 0.1
    done
    say "Slurm started but its node never came up; logs in $state: $(tail -n 2 "$state/slurmctld.log" 2>/dev/null)"
    return 1
}

case "${1:-}" in
    start | stop | status) ;;
    *) sed -n '2,25p' "$0" >&2; exit 2 ;;
esac
if [ "$1" = status ]; then
    if healthy; then echo "Slurm up (SLURM_CONF=$conf)"; exit 0; fi
    echo "Slurm not running"
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    if [ "$1" = start ] && healthy; then say "Slurm already running, reused (SLURM_CONF=$conf)"; exit 0; fi
    say "not root: Slurm cannot $1 here (slurmd must start jobs as root)"
    exit 1
fi
mkdir -p "$(dirname "$state")"
# One start or stop at a time: several checkouts may run test.sh at once.
exec 9> "$state.lock"
flock 9
case "$1" in
    start) start ;;
    stop) stop; say "Slurm stopped" ;;
esac
