#!/usr/bin/env bash
# exec_bench.sh [BUILD_DIR] [ROUNDS]: where the time of one task goes on a
# warm pair. Runs every task of tests/data/e2e-bench whose expected verdict is
# `match` (small tasks: tens of rows, one per executor feature) ROUNDS times
# (default 2) through `streamex exec`, and prints each run's split into
# prepare, replay, submit, run, materialize, score and cleanup, then the mean
# of each step over all runs. The pair (index $SX_BENCH_INDEX, default 2) is
# started first if it is not running, warmed with one untimed task, and
# stopped at the end if this script started it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$repo/build}"
rounds="${2:-2}"
streamex="$build/streamex"
bench="$repo/tests/data/e2e-bench"
index="${SX_BENCH_INDEX:-2}"
gateway="http://127.0.0.1:$((21000 + 20 * index + 3))"
out="$(mktemp -d)"
started=0

[ -x "$streamex" ] || {
    echo "exec_bench: no $streamex: build first (scripts/build.sh)" >&2
    exit 2
}
cleanup() {
    [ "$started" -eq 0 ] || "$streamex" runtime down --index "$index" >/dev/null 2>&1 || true
    rm -rf "$out"
}
trap cleanup EXIT

if ! curl -sf "$gateway/v1/info" >/dev/null 2>&1; then
    echo "starting pair $index" >&2
    "$streamex" runtime up --index "$index" --detach >&2
    started=1
fi

run_task() {
    "$streamex" -q exec --bench "$bench" --task "$1" --index "$index" \
        --method "bench=$bench/predictions.jsonl" --output "$out/$1.csv" || true
}

tasks="$(awk -F'\t' '$2 == "match" { print $1 }' "$bench/expected.tsv")"
run_task "$(echo "$tasks" | head -n 1)" >/dev/null # warm-up: class loading, JIT

for round in $(seq 1 "$rounds"); do
    for task in $tasks; do
        run_task "$task" | awk -v task="$task" -v round="$round" '
            /^task / { verdict = $3 }
            /^timings/ { print task, round, verdict, $4, $6, $8, $10, $12, $14, $16, $18 }'
    done
done | awk '
    BEGIN {
        printf "%-16s %5s %-9s %8s %8s %8s %8s %8s %8s %8s %8s\n", "task", "round",
               "verdict", "prepare", "replay", "submit", "run", "materlz", "score",
               "cleanup", "total"
    }
    {
        printf "%-16s %5s %-9s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f\n",
               $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
        for (i = 4; i <= 11; i++) sum[i] += $i
        n++
    }
    END {
        if (n == 0) { print "no timed run"; exit 1 }
        printf "%-16s %5s %-9s", "mean of " n, "", ""
        for (i = 4; i <= 11; i++) printf " %8.3f", sum[i] / n
        printf "\n"
    }'
