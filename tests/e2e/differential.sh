#!/usr/bin/env bash
# tests/e2e/differential.sh: the differential test against Flink BATCH, on a
# bounded seed. tests/differential/generate.py makes seeded tasks over every
# query shape and data trait; batch_gold.py computes each gold relation with
# Flink in BATCH mode over filesystem tables holding the same prepared rows
# (its own SQL Gateway client, nothing of streamex's path); `streamex run`
# executes the same SQL the streamex way; report.py classifies every task
# that does not match. Fails on any non-match that is not a named Flink
# difference (see report.py), or when streamex check rejects the bench.
# Pairs: the gold pair is $SX_DIFF_GOLD_INDEX (default 52); streamex run uses
# $SX_DIFF_WORKERS workers (default 2) from pair $SX_DIFF_INDEX on (default
# 50, 51). A gold pair already running is used and left running; every pair
# started here is stopped at the end.
# Env: SX_DIFF_COUNT (tasks, default 18: one per shape), SX_DIFF_SEED
# (default 22), SX_DIFF_KEEP=1 keeps the work folder, SX_DIFF_FLINK=X.Y the
# engine of every pair, gold's and the run's (default: the default engine;
# skipped unless under CI when it is not installed). On another engine the
# gold pair must not be running already: one of another engine would
# compute gold.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
here="$SX_SOURCE_DIR/tests/differential"
index="${SX_DIFF_INDEX:-50}"
gold_index="${SX_DIFF_GOLD_INDEX:-52}"
count="${SX_DIFF_COUNT:-18}"
seed="${SX_DIFF_SEED:-22}"
rt="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
require_runtime "$rt"
flink=()
if [ -n "${SX_DIFF_FLINK:-}" ]; then
    require_engine "$SX_DIFF_FLINK"
    flink=(--flink "$SX_DIFF_FLINK")
fi
[ "${SX_DIFF_KEEP:-0}" != 1 ] || SX_TEST_KEEP=1
work=$(make_tmpdir)
gold_started=0
cleanup() {
    if [ "$gold_started" = 1 ]; then
        pair_down "$gold_index"
    fi
}
at_exit cleanup

bench="$work/bench"
python3 "$here/generate.py" --out "$bench" --count "$count" --seed "$seed"

gateway="http://127.0.0.1:$((21000 + 20 * gold_index + 3))"
if curl -sf "$gateway/v1/info" >/dev/null 2>&1; then
    [ "${#flink[@]}" = 0 ] ||
        fail "gold pair $gold_index already runs: stop it for SX_DIFF_FLINK=$SX_DIFF_FLINK (streamex runtime down --index $gold_index)"
else
    "$STREAMEX" runtime up --index "$gold_index" --detach "${flink[@]}" >"$work/gold-pair.log" 2>&1 || {
        tail -n 20 "$work/gold-pair.log"
        fail "the gold pair $gold_index did not start"
    }
    gold_started=1
fi
python3 "$here/batch_gold.py" --bench "$bench" --gateway "$gateway"
if [ "$gold_started" = 1 ]; then
    "$STREAMEX" runtime down --index "$gold_index" >/dev/null 2>&1
    gold_started=0
fi

"$STREAMEX" check --bench "$bench" --method "diff=$bench/predictions.jsonl" >"$work/check.log" 2>&1 || {
    tail -n 20 "$work/check.log"
    fail "streamex check rejects the generated bench"
}
start=$(date +%s)
"$STREAMEX" run --bench "$bench" --method "diff=$bench/predictions.jsonl" --output "$work/out" \
    --workers "${SX_DIFF_WORKERS:-2}" --first-index "$index" "${flink[@]}" >"$work/run.log" 2>&1 || {
    tail -n 30 "$work/run.log"
    fail "streamex run exited with an error"
}
python3 "$here/report.py" --bench "$bench" --output "$work/out" --wall "$(($(date +%s) - start))"
