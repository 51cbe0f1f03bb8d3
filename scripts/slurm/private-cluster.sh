#!/usr/bin/env bash
# private-cluster.sh start|stop DIR: a private single-node Slurm on this
# machine, to try the recipes of this folder without a cluster (and for
# tests/e2e/slurm.sh). Everything lives in DIR: its own slurm.conf (clients
# and daemons find it through SLURM_CONF=DIR/slurm.conf), its own munge key
# and socket, state, spool, logs and pid files; nothing in /etc is read or
# changed, and no system service is started. Needs root (slurmd launches
# jobs as their submitter) and the Debian packages slurm-wlm and munge.
#   start   writes the config, starts munged, slurmctld and slurmd, and waits
#           until the node is idle; prints `export SLURM_CONF=...`
#   stop    stops the three daemons by the pids in DIR (SIGTERM, then
#           SIGKILL after 20 s)
# Environment: SX_SLURM_PORT (slurmctld port, slurmd uses the next one;
# default 6817), SX_SLURM_KILL_WAIT (KillWait, default 30 s).
# Exit status: 0 done, 1 failed, 3 Slurm cannot run here (the reason on
# stderr: not root, packages missing, a daemon that does not start).
set -euo pipefail

usage() {
    echo "usage: private-cluster.sh start|stop DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
action="$1"
dir="$(mkdir -p "$2" && cd "$2" && pwd)"
port="${SX_SLURM_PORT:-6817}"

cannot() {
    echo "private-cluster: $*" >&2
    exit 3
}

# pid_alive FILE: the pid in FILE names a running process.
pid_alive() {
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds.
wait_for() {
    local limit=$(($1 * 5)) i
    shift
    for ((i = 0; i < limit; i++)); do
        "$@" && return 0
        sleep 0.2
    done
    return 1
}

write_config() {
    local host node mem
    host="$(hostname -s)"
    # slurmd -C prints this node's NodeName line; RealMemory a little below
    # what it sees, else the node is drained for having less than declared.
    node="$(slurmd -C | head -n 1)"
    mem="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")"
    node="$(sed "s/RealMemory=[0-9]*/RealMemory=$((mem * 95 / 100))/" <<<"$node")"
    cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm/private-cluster.sh: a private single-node cluster.
ClusterName=sxprivate
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without it a job takes the whole node's memory and jobs run one at a time.
DefMemPerCPU=1024
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
KillWait=${SX_SLURM_KILL_WAIT:-30}
MinJobAge=3600
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
    mkdir -p "$dir/munge"
    chmod 700 "$dir/munge"
    [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" ||
        cannot "mungekey cannot create $dir/munge/munge.key"
    # --force: munged refuses, as a guard, to run as root with a socket
    # outside /run/munge; this one is private to DIR.
    munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
        --seed-file="$dir/munge/munged.seed" 2>"$dir/munge/start.err" ||
        cannot "munged does not start: $(head -c 300 "$dir/munge/start.err")"
    wait_for 10 test -S "$dir/munge/munge.socket" ||
        cannot "munged made no socket in 10 s ($dir/munge/munged.log)"
}

start() {
    [ "$(id -u)" = 0 ] || cannot "needs root (slurmd runs jobs as their submitter)"
    local cmd
    for cmd in munged mungekey slurmctld slurmd sinfo; do
        command -v "$cmd" >/dev/null || cannot "no $cmd (Debian packages slurm-wlm and munge: scripts/setup-deps.sh)"
    done
    mkdir -p "$dir/state" "$dir/spool"
    write_config
    export SLURM_CONF="$dir/slurm.conf"
    start_munge
    # -i: a state folder left by an earlier run is read leniently.
    setsid slurmctld -D -i >"$dir/slurmctld.out" 2>&1 </dev/null &
    echo $! >"$dir/slurmctld.pid.own"
    setsid slurmd -D >"$dir/slurmd.out" 2>&1 </dev/null &
    echo $! >"$dir/slurmd.pid.own"
    if ! wait_for 60 node_idle; then
        tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 2>/dev/null || true
        cannot "the node is not idle after 60 s (logs in $dir)"
    fi
    echo "export SLURM_CONF=$dir/slurm.conf"
}

node_idle() {
    [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]
}

# stop_pid FILE: SIGTERM to the pid in FILE, SIGKILL if it lives 20 s on.
stop_pid() {
    pid_alive "$1" || return 0
    local pid
    pid="$(cat "$1")"
    kill -TERM "$pid" 2>/dev/null || true
    wait_for 20 eval "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid" 2>/dev/null || true
}

stop() {
    # slurmd first: it ends the jobs' steps; slurmctld takes 4-5 s.
    stop_pid "$dir/slurmd.pid.own"
    stop_pid "$dir/slurmctld.pid.own"
    stop_pid "$dir/munge/munged.pid"
}

case "$action" in
start) start ;;
stop) stop ;;
*) usage ;;
esac
