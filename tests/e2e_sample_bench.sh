#!/usr/bin/env bash
# e2e_sample_bench.sh: the bundled sample benchmark through the whole
# pipeline (`streamex run`: coordinator, two workers, each with its own Kafka + Flink).
# Two methods: reference.jsonl must score 30/30 (gold, computed by the
# example's independent oracle, agrees with Flink), and predictions.jsonl
# must get, task by task, the status in expected.jsonl and so the EX that
# examples/sample-bench/README.md states (checked by
# tests/e2e/sample_verdicts.py, shared with e2e_compose.sh and e2e_slurm.sh).
# The workers use pair indexes 0 and 1, started and stopped by streamex run
# itself.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
out=$(make_tmpdir) # kept for inspection when the test fails

"$STREAMEX" run --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --method "reference=$bench/reference.jsonl" --output "$out" --workers 2 \
    >"$out/run.log" 2>&1 || {
    tail -n 30 "$out/run.log"
    fail "streamex run exited with an error"
}
grep "EX =" "$out/run.log" || true

python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$out" \
    sample=predictions reference=reference
# Each worker's HELLO said what its pair runs (the installed versions), and
# every executed task kept its step times.
source "$SX_SOURCE_DIR/runtime/versions.env"
want="Flink $SX_FLINK_VERSION (Kafka connector $SX_FLINK_KAFKA_CONNECTOR_VERSION), Kafka $SX_KAFKA_VERSION"
python3 - "$out" "$want" <<'PY'
import json, sys
out, want = sys.argv[1], sys.argv[2]
workers = json.load(open(out + "/summary.json"))["run"]["workers"]
assert workers == {"w0": want, "w1": want}, "run.workers is %r" % workers
for line in open(out + "/reference/results.jsonl"):
    r = json.loads(line)
    steps = r.get("steps")
    assert steps and steps["run"] > 0 and min(steps.values()) >= 0, "%s: steps %r" % (r["task_id"], steps)
    assert sum(steps.values()) <= r["seconds"] + 0.01, "%s: steps %r over %s s" % (r["task_id"], steps, r["seconds"])
PY
echo "e2e_sample_bench: OK"
