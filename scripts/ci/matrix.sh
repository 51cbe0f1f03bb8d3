#!/usr/bin/env bash
# matrix.sh shard I N | merge | worker NAME: what every job of the CI
# recipes runs (docs/ci/github-actions.yml and docs/ci/gitlab-ci.yml are two
# wrappers of this one script, docs/ci/*-workers.yml of its worker verb;
# tests/cli/ci_recipes.sh runs it through the GitLab ones).
# Run from the project folder: the bench, the predictions and the outputs
# are relative to it.
#   shard I N  installs what the shard needs with streamex's own scripts
#              (Debian packages, the build, the Kafka + Flink runtime into
#              $SX_RUNTIME_DIR, by default ./.streamex-runtime, whose
#              downloads/ and m2/ the recipes cache), then runs
#              `streamex run --shard I/N --workers 1` into out-I (with
#              --resume where out-I holds a journal: a rerun on a runner
#              that kept it). A run that ends with exit 3 (complete, some
#              tasks infra_error) runs those tasks again SX_INFRA_RERUNS
#              times (default 1) with --resume --rerun infra_error; if some
#              still fail so, the shard is complete all the same (its
#              outputs are whole, those tasks score 0): a warning, exit 0.
#              A complete shard gets out-I/shard.env (its I and N), the
#              mark the merge trusts. Any other exit fails the job with
#              streamex's exit status.
#   merge      merges every out-I marked complete into out (report.html
#              included) with the full denominator: `streamex merge` names
#              each missing task ID, this script each missing shard and the
#              line that reruns them; prints EX per method. Exit 0 when
#              every task is there, 1 when some are missing (0 with
#              SX_ALLOW_MISSING=true: accepted knowingly), 2 when the
#              outputs are unusable.
#   worker NAME  installs as shard does, then runs `streamex worker
#              --connect $SX_COORDINATOR --name NAME` (a coordinator that the
#              runners reach: docs/ci-matrix.md section 2), with the CURVE
#              keys given as the contents of SX_WORKER_CERT,
#              SX_WORKER_CERT_SECRET and SX_COORDINATOR_CERT (CI secrets).
#              Exits as the worker: 0 once the coordinator ended the run.
# Settings (environment; the recipes set them):
#   SX_BENCH          the benchmark folder (default bench)
#   SX_METHODS        NAME=PREDICTIONS.jsonl ..., space-separated (default
#                     mine=predictions.jsonl)
#   SX_RUN_OPTIONS    more options of `streamex run`, space-separated
#                     (--profile P, --retries N, ...)
#   SX_SIMULATE       a --simulate SPEC: the simulated executor, no runtime
#                     installed (a dry run of the pipeline)
#   SX_ALLOW_MISSING  true: the merge accepts missing tasks (they score 0)
#   SX_INFRA_RERUNS   how often a shard reruns its infra_error tasks (1)
#   STREAMEX          a streamex binary to use as it is: no packages
#                     installed, nothing built (an image that has it)
#   SX_COORDINATOR, SX_WORKER_CERT, SX_WORKER_CERT_SECRET,
#   SX_COORDINATOR_CERT  the worker verb's (above); SX_WORKER_OPTIONS more
#                     `streamex worker` options, space-separated
set -euo pipefail
home="$(cd "$(dirname "$0")/../.." && pwd)"
bench="${SX_BENCH:-bench}"
read -ra methods <<<"${SX_METHODS:-mine=predictions.jsonl}"

say() { echo "streamex-ci: $*"; }
# warn MESSAGE: on stderr, and as an annotation of the run on GitHub.
warn() {
    echo "streamex-ci: warning: $*" >&2
    [ "${GITHUB_ACTIONS:-}" != true ] || echo "::warning::$*"
}
# die CODE MESSAGE: on stderr, then exit CODE.
die() {
    local code="$1"
    shift
    echo "streamex-ci: error: $*" >&2
    exit "$code"
}

# Sets STREAMEX: the given binary, else this checkout built with its
# Debian packages.
prepare_streamex() {
    if [ -n "${STREAMEX:-}" ]; then
        [ -x "$STREAMEX" ] || die 2 "STREAMEX=$STREAMEX is not an executable"
        return 0
    fi
    "$home/scripts/setup-deps.sh"
    "$home/scripts/build.sh" build
    STREAMEX="$home/build/streamex"
}

# Sets execution: the options of run or worker that choose how tasks are
# executed: the simulated executor (SX_SIMULATE), else the Kafka + Flink
# runtime, installed into SX_RUNTIME_DIR (default ./.streamex-runtime) now.
prepare_execution() {
    if [ -n "${SX_SIMULATE:-}" ]; then
        execution=(--simulate "$SX_SIMULATE")
    else
        export SX_RUNTIME_DIR="${SX_RUNTIME_DIR:-$PWD/.streamex-runtime}"
        "$home/scripts/setup-runtime.sh"
        execution=()
    fi
}

# run_streamex ARGS...: streamex with ARGS; returns its exit status. A
# cancelled job's TERM or INT reaches streamex, which stops its pair and
# exits 1 (resumable); bash alone would wait for it first.
run_streamex() {
    local pid rc
    "$STREAMEX" "$@" &
    pid=$!
    trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
    rc=0
    wait "$pid" || rc=$?
    while kill -0 "$pid" 2>/dev/null; do
        rc=0
        wait "$pid" || rc=$?
    done
    trap - TERM INT
    return "$rc"
}

shard() {
    if ! [[ $# -eq 2 && "$1" =~ ^[0-9]+$ && "$2" =~ ^[1-9][0-9]*$ && "$1" -lt "$2" ]]; then
        die 2 "usage: matrix.sh shard I N (0 <= I < N), got: $*"
    fi
    local i="$1" n="$2" out="out-$1" rc=0 reruns=0 method options
    local max="${SX_INFRA_RERUNS:-1}"
    prepare_streamex
    local args=(run --bench "$bench" --workers 1 --shard "$i/$n" --output "$out")
    for method in "${methods[@]}"; do
        args+=(--method "$method")
    done
    prepare_execution
    args+=("${execution[@]}")
    read -ra options <<<"${SX_RUN_OPTIONS:-}"
    args+=("${options[@]}")
    rm -f "$out/shard.env"
    if [ -f "$out/journal.jsonl" ]; then
        say "shard $i/$n: $out holds a journal: resuming it"
        run_streamex "${args[@]}" --resume || rc=$?
    else
        run_streamex "${args[@]}" || rc=$?
    fi
    while [ "$rc" -eq 3 ] && [ "$reruns" -lt "$max" ]; do
        reruns=$((reruns + 1))
        say "shard $i/$n: complete, some tasks ended infra_error: running them again" \
            "(--resume --rerun infra_error, $reruns of $max)"
        rc=0
        run_streamex "${args[@]}" --resume --rerun infra_error || rc=$?
    done
    case "$rc" in
    0) ;;
    3) warn "shard $i/$n is complete, but some tasks still ended infra_error after $reruns" \
        "rerun(s) (the line above says how many): they score 0 in the merge" ;;
    *) die "$rc" "shard $i/$n: streamex run exited $rc (1 stopped before the end, 2 usage" \
        "or fatal error, 128+N signal N): its tasks are missing until this job runs again" ;;
    esac
    printf 'shard=%s\nshards=%s\n' "$i" "$n" >"$out/shard.env"
    say "shard $i/$n complete in $out"
}

# shard_field FILE NAME: the number NAME=... of a shard.env, or nothing.
shard_field() {
    sed -n "s/^$2=\([0-9][0-9]*\)\$/\1/p" "$1"
}

# The command that runs the missing shards again and then this merge, for
# the CI this runs on (missing: the shard indexes, count: N).
rerun_line() {
    local list="$1" count="$2" i
    if [ -n "${CI_API_V4_URL:-}" ] && [ -n "${CI_PIPELINE_ID:-}" ]; then
        # GitLab (its predefined variables: GITLAB_CI is false under
        # gitlab-ci-local). Retrying a pipeline retries its failed jobs: the
        # shards and this merge (which failed, unless SX_ALLOW_MISSING).
        echo "curl --fail --request POST --header \"PRIVATE-TOKEN: \$GITLAB_TOKEN\"" \
            "$CI_API_V4_URL/projects/$CI_PROJECT_ID/pipelines/$CI_PIPELINE_ID/retry"
    elif [ "${GITHUB_ACTIONS:-}" = true ]; then
        # With SX_ALLOW_MISSING a failed shard's job passed: only a full
        # rerun runs it again.
        local failed=" --failed"
        [ "${SX_ALLOW_MISSING:-}" != true ] || failed=""
        echo "gh run rerun $GITHUB_RUN_ID$failed --repo $GITHUB_REPOSITORY"
    else
        local line=""
        for i in ${list//,/ }; do
            line+="$0 shard $i $count && "
        done
        echo "$line$0 merge"
    fi
}

merge() {
    [ $# -eq 0 ] || die 2 "usage: matrix.sh merge"
    prepare_streamex
    local marker dir i n count="" inputs=() missing=() status=0
    for marker in out-*/shard.env; do
        [ -f "$marker" ] || continue
        dir="${marker%/shard.env}"
        i="$(shard_field "$marker" shard)"
        n="$(shard_field "$marker" shards)"
        if [ -z "$i" ] || [ -z "$n" ] || [ "$dir" != "out-$i" ]; then
            die 2 "$marker does not describe shard ${dir#out-} (shard=$i shards=$n)"
        fi
        [ -z "$count" ] || [ "$n" = "$count" ] ||
            die 2 "$marker is a shard of $n, others of $count: outputs of two matrices"
        count="$n"
    done
    if [ -z "$count" ]; then
        warn "no complete shard output (out-*/shard.env): every shard job failed, or no" \
            "artifact reached this job; nothing to merge"
        exit 1
    fi
    for ((i = 0; i < count; i++)); do
        if [ -f "out-$i/shard.env" ]; then
            inputs+=("out-$i")
        else
            missing+=("$i")
            warn "shard $i of $count is missing: its job failed, or its artifact out-$i did" \
                "not reach this job; its tasks score 0 (named below)"
        fi
    done
    rm -rf out
    "$STREAMEX" merge --bench "$bench" "${inputs[@]}" --output out || status=$?
    if [ "$status" -eq 2 ]; then
        die 2 "streamex merge refused the shard outputs"
    fi
    python3 - out/summary.json <<'EOF'
import json, sys
for name, m in sorted(json.load(open(sys.argv[1]))["methods"].items()):
    print(f"{name}: EX = {m['correct']}/{m['total']} = {m['ex']:.4f} (merged)")
EOF
    if [ ${#missing[@]} -gt 0 ]; then
        local list
        list="$(IFS=,; echo "${missing[*]}")"
        say "shard(s) $list of $count missing; to rerun them and merge again:"
        rerun_line "$list" "$count"
        [ "$status" -ne 0 ] || status=1
    fi
    if [ "$status" -ne 0 ] && [ "${SX_ALLOW_MISSING:-}" = true ]; then
        warn "tasks are missing and score 0: accepted (SX_ALLOW_MISSING=true)"
        status=0
    fi
    say "merged into out (out/report.html)"
    return "$status"
}

worker() {
    if [ $# -ne 1 ] || [ -z "$1" ]; then
        die 2 "usage: matrix.sh worker NAME"
    fi
    [ -n "${SX_COORDINATOR:-}" ] || die 2 "SX_COORDINATOR is not set: tcp://HOST:PORT of the coordinator"
    local name="$1" options rc=0
    prepare_streamex
    prepare_execution
    local args=(worker --connect "$SX_COORDINATOR" --name "$name" "${execution[@]}")
    if [ -n "${SX_WORKER_CERT:-}${SX_WORKER_CERT_SECRET:-}${SX_COORDINATOR_CERT:-}" ]; then
        if [ -z "${SX_WORKER_CERT:-}" ] || [ -z "${SX_WORKER_CERT_SECRET:-}" ] ||
            [ -z "${SX_COORDINATOR_CERT:-}" ]; then
            die 2 "CURVE needs all three of SX_WORKER_CERT, SX_WORKER_CERT_SECRET and SX_COORDINATOR_CERT"
        fi
        # The secret key stays on this runner, readable by this user only,
        # and goes when the job ends.
        keys="$(mktemp -d)"
        trap 'rm -rf "$keys"' EXIT
        (
            umask 077
            printf '%s\n' "$SX_WORKER_CERT" >"$keys/worker.cert"
            printf '%s\n' "$SX_WORKER_CERT_SECRET" >"$keys/worker.cert_secret"
            printf '%s\n' "$SX_COORDINATOR_CERT" >"$keys/coordinator.cert"
        )
        args+=(--cert "$keys/worker.cert" --server-cert "$keys/coordinator.cert")
    fi
    read -ra options <<<"${SX_WORKER_OPTIONS:-}"
    args+=("${options[@]}")
    say "worker $name: connecting to $SX_COORDINATOR (it exits when the coordinator ends the run)"
    run_streamex "${args[@]}" || rc=$?
    return "$rc"
}

case "${1:-}" in
shard | merge | worker)
    verb="$1"
    shift
    "$verb" "$@"
    ;;
*) die 2 "usage: matrix.sh shard I N | matrix.sh merge | matrix.sh worker NAME" ;;
esac
