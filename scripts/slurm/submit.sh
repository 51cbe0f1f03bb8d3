#!/usr/bin/env bash
# submit.sh: submits a streamex run to Slurm in one of the two recipes of
# scripts/slurm/README.md, after writing the run folder every job of it reads.
#   submit.sh shards N RUN [SBATCH-OPTION...] -- STREAMEX-OPTION...
#       an array of N elements (shard.sbatch), element I running
#       `streamex run --shard I/N` with its own pair, and a merge job
#       (merge.sbatch) that starts when every element has ended
#   submit.sh coordinator K RUN [SBATCH-OPTION...] -- STREAMEX-OPTION...
#       one job of K tasks (coordinator.sbatch): the coordinator on the
#       first node, one worker per task
# RUN is a folder on the shared file system: run.env and run.args (what
# the jobs read), logs/, the outputs. STREAMEX-OPTIONs are those of
# `streamex run`/`coordinator` that choose the work (--bench and at least
# one --method, --profile, --shard-size, --retries) and --flink X.Y, the
# engine of every pair (the install must hold it: scripts/setup-runtime.sh
# --flink X.Y; the jobs get it as $SX_FLINK); paths in them are made
# absolute here. SBATCH-OPTIONs (--partition, --time, --mem, -c, ...) go
# to every sbatch call and are kept for the rerun line the merge prints.
# Environment: STREAMEX (default <repo>/build/streamex), SX_RUNTIME_DIR
# (the shared install, default <repo>/.runtime); both must be readable on
# every node. Prints the job IDs: `shards JOB merge JOB` or `coordinator JOB`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
home="$(cd "$here/../.." && pwd)"

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
[ $# -ge 3 ] || usage
recipe="$1" count="$2" run="$3"
shift 3
case "$recipe" in shards | coordinator) ;; *) usage ;; esac
[[ "$count" =~ ^[1-9][0-9]*$ ]] || usage

sbatch_opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    sbatch_opts+=("$1")
    shift
done
[ $# -gt 0 ] || usage
shift

# absolute PATH: PATH made absolute against the submission folder.
absolute() {
    case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac
}

args=() bench="" flink=""
while [ $# -gt 0 ]; do
    case "$1" in
    --flink)
        flink="${2:?--flink needs a version X.Y}"
        shift 2
        ;;
    --bench)
        bench="$(absolute "${2:?--bench needs a folder}")"
        args+=(--bench "$bench")
        shift 2
        ;;
    --method)
        local_file="${2#*=}"
        args+=(--method "${2%%=*}=$(absolute "$local_file")")
        shift 2
        ;;
    *)
        args+=("$1")
        shift
        ;;
    esac
done
[ -n "$bench" ] || {
    echo "submit.sh: --bench is required (the merge and the checks need it)" >&2
    exit 2
}

streamex="$(absolute "${STREAMEX:-$home/build/streamex}")"
runtime="$(absolute "${SX_RUNTIME_DIR:-$home/.runtime}")"
[ -x "$streamex" ] || {
    echo "submit.sh: $streamex is not executable (scripts/build.sh build, or set STREAMEX)" >&2
    exit 2
}
mkdir -p "$run/logs"
run="$(cd "$run" && pwd)"

# run.env: sourced by every job; values quoted for the shell.
{
    printf 'SX_HOME=%q\n' "$home"
    printf 'STREAMEX=%q\n' "$streamex"
    printf 'SX_RUNTIME_DIR=%q\n' "$runtime"
    printf 'SX_BENCH=%q\n' "$bench"
    printf 'SX_RECIPE=%q\n' "$recipe"
    printf 'SX_COUNT=%q\n' "$count"
    # The pairs' engine: streamex run and worker take $SX_FLINK for --flink.
    [ -z "$flink" ] || printf 'export SX_FLINK=%q\n' "$flink"
    if [ ${#sbatch_opts[@]} -gt 0 ]; then
        printf 'SX_SBATCH_OPTS=(%s)\n' "$(printf '%q ' "${sbatch_opts[@]}")"
    else
        echo 'SX_SBATCH_OPTS=()'
    fi
} >"$run/run.env"
# run.args: the streamex options, NUL-separated (mapfile -d '').
printf '%s\0' "${args[@]}" >"$run/run.args"

if [ "$recipe" = shards ]; then
    shards=$(sbatch --parsable --array="0-$((count - 1))" --output="$run/logs/shard-%a-%A.out" \
        --export="ALL,SX_RUN=$run" "${sbatch_opts[@]}" "$here/shard.sbatch")
    merge=$(sbatch --parsable --dependency="afterany:${shards%%;*}" \
        --output="$run/logs/merge-%j.out" --export="ALL,SX_RUN=$run" \
        "${sbatch_opts[@]}" "$here/merge.sbatch")
    echo "shards ${shards%%;*} merge ${merge%%;*}"
else
    job=$(sbatch --parsable --ntasks="$count" --output="$run/logs/coordinator-%j.out" \
        --export="ALL,SX_RUN=$run" "${sbatch_opts[@]}" "$here/coordinator.sbatch")
    echo "coordinator ${job%%;*}"
fi
