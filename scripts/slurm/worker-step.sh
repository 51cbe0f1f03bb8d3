#!/usr/bin/env bash
# worker-step.sh: one worker of the coordinator recipe, run by
# coordinator.sbatch as a job step (srun): a pair on node-local scratch
# with an index no other job on the node holds, and `streamex worker`
# connected to SX_ENDPOINT (with the keys in SX_KEYS when set: across
# nodes). Stops its pair and removes its scratch when it ends.
set -euo pipefail
: "${SX_RUN:?}" "${SX_ENDPOINT:?}"
source "$SX_RUN/run.env"
source "$SX_HOME/scripts/slurm/common.sh"
name="slurm-${SLURM_JOB_ID:-0}-${SLURM_STEP_ID:-0}"
sx_node_begin "worker $name"
key_opts=()
[ -z "${SX_KEYS:-}" ] || key_opts=(--cert "$SX_KEYS/slurm.cert" --server-cert "$SX_KEYS/coordinator.cert")
"$STREAMEX" worker --connect "$SX_ENDPOINT" --name "$name" --index "$SX_PAIR_INDEX" \
    --work-dir "$SX_NODE_SCRATCH/work" "${key_opts[@]}" &
sx_wait $!
