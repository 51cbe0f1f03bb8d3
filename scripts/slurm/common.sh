# common.sh: sourced by the batch scripts of scripts/slurm/: what every
# element or worker step does on its node before and after streamex runs.
#   sx_node_begin NAME  a node-local scratch folder, a runtime folder in it
#                       that reads the shared install and keeps its pair
#                       there, and a pair index no other job on the node
#                       holds; on exit stops the pair, removes the folder,
#                       writes the exit status to $SX_STATUS_FILE if set
#                       and logs it under NAME
#   sx_wait PID         waits for PID, passing SIGTERM/SIGINT on to it, and
#                       returns its exit status
# Settings (environment): SX_RUNTIME_DIR the shared install (what
# scripts/setup-runtime.sh made), SX_SCRATCH the node-local disk (default
# $SLURM_TMPDIR, $TMPDIR, else /tmp), SX_FIRST_INDEX and SX_INDEX_COUNT the
# pair indexes a job may take (default 0 and 32: ports 21000-21639),
# SX_LOCK_DIR where the node's index locks are (default /tmp/streamex-pairs).

# sx_link_runtime SHARED LOCAL: LOCAL becomes a runtime folder whose parts
# are links to the shared install, except pairs/: a pair's config, Kafka
# data, Flink temporary files and logs go to node-local disk, never to the
# shared file system, and two nodes never share a pair folder.
sx_link_runtime() {
    local shared="$1" local_dir="$2" part
    # Any engine's marker: the default's, or flink-X.Y's (--flink).
    [ -f "$shared/installed.env" ] ||
        compgen -G "$shared/flink-*/installed.env" >/dev/null || {
        echo "streamex-slurm: no runtime installed in $shared (scripts/setup-runtime.sh; set SX_RUNTIME_DIR)" >&2
        return 1
    }
    mkdir -p "$local_dir/pairs"
    for part in "$shared"/*; do
        [ "${part##*/}" = pairs ] || ln -s "$part" "$local_dir/"
    done
}

# sx_port_free PORT: nothing listens on 127.0.0.1:PORT.
sx_port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# sx_claim_pair: sets SX_PAIR_INDEX to an index whose lock this shell now
# holds and whose 20 ports are free. The lock (flock on a node-local file)
# is what keeps two jobs on one node apart, whatever their array indexes or
# users; it is inherited by streamex and its JVMs and released when the
# last of them exits.
sx_claim_pair() {
    local first="${SX_FIRST_INDEX:-0}" count="${SX_INDEX_COUNT:-32}"
    local locks="${SX_LOCK_DIR:-/tmp/streamex-pairs}" i port fd busy
    mkdir -p "$locks" && chmod 1777 "$locks" 2>/dev/null || true
    for ((i = first; i < first + count; i++)); do
        [ -e "$locks/$i.lock" ] || : >>"$locks/$i.lock"
        exec {fd}<"$locks/$i.lock"
        if flock -n "$fd"; then
            busy=0
            for ((port = 21000 + 20 * i; port < 21020 + 20 * i; port++)); do
                sx_port_free "$port" || {
                    busy=1
                    break
                }
            done
            if [ "$busy" = 0 ]; then
                SX_PAIR_INDEX="$i"
                return 0
            fi
        fi
        exec {fd}<&-
    done
    echo "streamex-slurm: no free pair index in $first..$((first + count - 1)) on $(hostname -s) (raise SX_INDEX_COUNT)" >&2
    return 1
}

# sx_cleanup: the EXIT trap. Stops whatever of the pair is still running
# (streamex stops its own pair on SIGTERM; this is for a streamex that was
# killed), removes the scratch folder and writes the exit status to
# $SX_STATUS_FILE when set (the merge job reads it).
sx_cleanup() {
    local status=$? index="${SX_PAIR_INDEX:-}"
    if [ -n "$index" ] && [ -n "${SX_NODE_RUNTIME:-}" ]; then
        "$STREAMEX" -q runtime down --index "$index" \
            --runtime-dir "$SX_NODE_RUNTIME" >/dev/null 2>&1 || true
    fi
    [ -z "${SX_NODE_SCRATCH:-}" ] || rm -rf "$SX_NODE_SCRATCH"
    [ -z "${SX_STATUS_FILE:-}" ] || echo "$status" >"$SX_STATUS_FILE"
    echo "streamex-slurm: ${SX_NODE_NAME:-job} ended with status $status" >&2
}

# sx_node_begin NAME: see the top of this file. A stop signal before
# streamex runs ends the script with 143 through sx_cleanup.
sx_node_begin() {
    SX_NODE_NAME="$1"
    local base="${SX_SCRATCH:-${SLURM_TMPDIR:-${TMPDIR:-/tmp}}}"
    trap sx_cleanup EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    SX_NODE_SCRATCH="$(mktemp -d "$base/streamex-${SLURM_JOB_ID:-0}.${SLURM_STEP_ID:-0}.XXXXXX")"
    SX_NODE_RUNTIME="$SX_NODE_SCRATCH/runtime"
    sx_link_runtime "${SX_RUNTIME_DIR:?set SX_RUNTIME_DIR to the shared install}" \
        "$SX_NODE_RUNTIME" || return 1
    sx_claim_pair || return 1
    export SX_RUNTIME_DIR="$SX_NODE_RUNTIME"
    echo "streamex-slurm: $SX_NODE_NAME on $(hostname -s): pair $SX_PAIR_INDEX (ports $((21000 + 20 * SX_PAIR_INDEX))..), scratch $SX_NODE_SCRATCH" >&2
}

# sx_wait PID: bash runs a trap only between commands, so the batch script
# waits with `wait`, which a signal interrupts: SIGTERM (scancel,
# preemption, the time limit) is passed on to streamex, which stops its pair
# and exits 143; then this returns its status.
sx_wait() {
    local pid="$1" status=0
    trap 'kill -TERM '"$pid"' 2>/dev/null || true' TERM INT
    while kill -0 "$pid" 2>/dev/null; do
        wait "$pid" 2>/dev/null || true
    done
    # bash keeps the status of a reaped child: this is streamex's own.
    wait "$pid" 2>/dev/null || status=$?
    trap 'exit 143' TERM
    trap 'exit 130' INT
    return "$status"
}
