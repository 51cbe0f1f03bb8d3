#!/usr/bin/env bash
# tests/e2e/flink22.sh: the bundled sample on a Flink 2.2 pair, end to end
# (`streamex run --flink 2.2 --workers 1`: a coordinator and one worker whose
# pair runs the engine scripts/setup-runtime.sh --flink 2.2 installs). Every
# task must get exactly the status of examples/sample-bench/expected.jsonl,
# the statuses 1.20 gives (tests/e2e/sample_bench.sh): no sample task's
# status differs between the engines. The sample has none of the engine
# hazards check warns about but one: sb28 is a Top-1 ordered by a non-time
# column, but over an updating aggregate, which 2.2.1's Top-1
# taken for insert-only does not touch (docs/internals/flink-2.md, "Phase 2
# figures"). A task that came to differ would fail here, to be named in
# that page and expected.jsonl with Flink's change that made it. Every
# result, summary.json's run and its workers must name the 2.2 engine, as
# the pair's start line does. One run of the sample's predictions, bounded
# for CI; the reference and the fault tests on a 2.2 pair are left to runs
# by hand (issue 41). Skips, unless under
# CI, when the 2.2 engine is not installed. Pair index $SX_E2E_FLINK22_INDEX
# (default 0), started and stopped by the run itself.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
require_engine 2.2
index="${SX_E2E_FLINK22_INDEX:-0}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
out=$(make_tmpdir) # kept for inspection when the test fails
at_exit "pair_down $index"
engine=$("$STREAMEX" --version | sed -n 's/^  \(flink-2\.2\.[^ ]*\) (--flink 2\.2)$/\1/p')
[ -n "$engine" ] || fail "no 2.2 engine label in streamex --version"

start=$(date +%s)
"$STREAMEX" run --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --output "$out" --workers 1 --slots 4 --first-index "$index" --flink 2.2 \
    >"$out/run.log" 2>&1 || {
    tail -n 30 "$out/run.log"
    fail "streamex run --flink 2.2 exited with an error"
}
wall=$(($(date +%s) - start))
grep -q "pair $index up: $engine, Kafka at " "$out/run.log" ||
    fail "the pair did not start on $engine: $(grep "pair $index" "$out/run.log" | tail -n 3)"

python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$out" sample=predictions

predicted=$(grep -c . "$bench/predictions.jsonl")
python3 - "$out" "$engine" "$predicted" <<'PY'
import json, sys
out, engine, predicted = sys.argv[1], sys.argv[2], int(sys.argv[3])
run = json.load(open(out + "/summary.json"))["run"]
assert run.get("engine") == engine, "run.engine is %r" % run.get("engine")
assert run.get("workers") == {"w0": engine}, "run.workers is %r" % run.get("workers")
executed = 0
for line in open(out + "/sample/results.jsonl"):
    r = json.loads(line)
    if r["worker"]:
        executed += 1
        assert r.get("engine") == engine, "%s: engine %r" % (r["task_id"], r.get("engine"))
    else:
        assert "engine" not in r, "%s: no worker, yet engine %r" % (r["task_id"], r["engine"])
assert executed == predicted, "%d tasks executed, %d predicted" % (executed, predicted)
print("%d executed results name %s" % (executed, engine))
PY
grep "EX =" "$out/run.log"
echo "flink 2.2 sample: wall $wall s"
echo "e2e_flink22: OK"
