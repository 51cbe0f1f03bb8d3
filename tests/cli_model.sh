#!/usr/bin/env bash
# cli_model.sh: the model-based test of the distributed run (tests/e2e/model.c)
# on a bounded number of seeds: seeded random schedules of worker joins,
# pauses past dead-after, kills, a hostile peer, coordinator kills with
# --resume and full disks, each checked against the verdicts the simulated
# executor's markers predict. More seeds, e.g. thousands:
#   build/tests/e2e_model build/streamex --seeds 2000 --first 1000
# (SX_MODEL_SEEDS and SX_MODEL_FIRST change the count and start here.)
set -euo pipefail
: "${STREAMEX:?}" "${SX_BUILD_DIR:?}" "${SX_SOURCE_DIR:?}"
model="$SX_BUILD_DIR/tests/e2e_model"
[ -x "$model" ] || { echo "cli_model: no $model (build first)" >&2; exit 77; }
"$model" "$STREAMEX" --seeds "${SX_MODEL_SEEDS:-6}" --first "${SX_MODEL_FIRST:-1}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
bench="$SX_SOURCE_DIR/examples/sample-bench"

echo "== ZeroMQ's source;destination form is not loopback unless both sides are"
set +e
"$STREAMEX" worker --connect 'tcp://127.0.0.1:0;192.0.2.2:5555' --simulate delay_ms=0 \
    --work-dir "$tmp/w" > "$tmp/worker.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--insecure" "$tmp/worker.txt" || fail "source;destination accepted (rc $rc)"

echo "== a method named like a file of the OUT layout is refused before any work"
set +e
"$STREAMEX" coordinator --bench "$bench" --method "journal.jsonl=$bench/predictions.jsonl" \
    --output "$tmp/out" --bind "ipc://$tmp/c.ipc" > "$tmp/coordinator.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "collides with OUT/journal.jsonl" "$tmp/coordinator.txt" ||
    fail "method journal.jsonl accepted (rc $rc)"
[ ! -e "$tmp/out/journal.jsonl" ] || fail "a journal was started"
echo "OK"
