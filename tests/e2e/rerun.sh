#!/usr/bin/env bash
# tests/e2e/rerun.sh: `--resume --rerun infra_error` on the real runtime. Two tasks
# of the sample bench (sb01: mismatch, sb03: match, as expected.jsonl says)
# meet a real infrastructure failure: a worker on an existing pair whose SQL
# Gateway is killed after the worker has started, so every attempt fails to
# open a gateway session. The coordinator settles both as infra_error and
# exits 3 with the infra_error line last. Then `streamex run --resume --rerun
# infra_error`, on a whole pair again, turns both into their real verdicts in
# every output (exit 0), and the journal keeps both histories.
# Uses pair index $SX_E2E_INDEX (default 80); stopped at the end.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
index="${SX_E2E_INDEX:-80}"
runtime_dir="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
pair="$runtime_dir/pairs/$index"
base=$((21000 + 20 * index))
tmp=$(make_tmpdir)
out="$tmp/out"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    pair_down "$index"
}
at_exit cleanup

require_runtime "$runtime_dir"

# wait_for SECONDS WHAT CMD...: until CMD succeeds, or fail after SECONDS.
wait_for() {
    local deadline=$((SECONDS + $1)) what="$2"
    shift 2
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "no $what after ${deadline}s"
        sleep 0.5
    done
}

echo "== pair $index up"
"$STREAMEX" runtime up --index "$index" --detach >/dev/null
gateway_pid=$(cat "$pair/pids/gateway.pid")

echo "== a worker on it, then its SQL Gateway killed: both tasks end infra_error"
port=$(free_port)
"$STREAMEX" worker --connect "tcp://127.0.0.1:$port" --name hurt --work-dir "$tmp/wd" \
    --kafka-bootstrap "127.0.0.1:$base" --flink-gateway "http://127.0.0.1:$((base + 3))" \
    --flink-rest "http://127.0.0.1:$((base + 2))" > "$tmp/worker.log" 2>&1 &
worker=$!
pids+=("$worker")
# The worker checks the pair once at start (Kafka, JobManager, Gateway answer).
wait_for 120 "worker start" grep -q "worker hurt connected to" "$tmp/worker.log"
kill -9 "$gateway_pid"
wait_for 30 "dead gateway" bash -c "! kill -0 $gateway_pid 2>/dev/null"
code=0
"$STREAMEX" coordinator --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --output "$out" --bind "tcp://127.0.0.1:$port" --retries 2 \
    --tasks sb01_high_bids,sb03_auctions_without_reserve \
    > "$tmp/coordinator.txt" 2> "$tmp/coordinator.log" || code=$?
[ "$code" = 3 ] || fail "coordinator exit $code, expected 3: $(tail -5 "$tmp/coordinator.log")"
want="infra_error: 2 task(s) ended on an infrastructure failure, not a verdict: rerun them with --resume --rerun infra_error"
[ "$(tail -n 1 "$tmp/coordinator.txt")" = "$want" ] ||
    fail "last line: $(tail -n 1 "$tmp/coordinator.txt")"
for id in sb01_high_bids sb03_auctions_without_reserve; do
    grep -q "\"task_id\":\"$id\",.*\"status\":\"infra_error\",.*\"attempts\":2," \
        "$out/sample/results.jsonl" || fail "$id: $(grep "$id" "$out/sample/results.jsonl")"
done
wait_for 30 "worker exit" bash -c "! kill -0 $worker 2>/dev/null"
"$STREAMEX" runtime down --index "$index" >/dev/null

echo "== --resume --rerun infra_error on a whole pair: the real verdicts"
code=0
"$STREAMEX" run --bench "$bench" --method "sample=$bench/predictions.jsonl" --output "$out" \
    --workers 1 --first-index "$index" --resume --rerun infra_error \
    --tasks sb01_high_bids,sb03_auctions_without_reserve \
    > "$tmp/rerun.txt" 2> "$tmp/rerun.log" || code=$?
[ "$code" = 0 ] || fail "rerun exit $code: $(tail -5 "$tmp/rerun.log")"
python3 - "$out" <<'EOF' || fail "outputs after the rerun"
import json, os, sys
out = sys.argv[1]
want = {"sb01_high_bids": "mismatch", "sb03_auctions_without_reserve": "match"}
results = [json.loads(l) for l in open(out + "/sample/results.jsonl")]
index = [json.loads(l) for l in open(out + "/sample/submission.jsonl")]
summary = json.load(open(out + "/summary.json"))
bad = []
if [r["task_id"] for r in results] != list(want):
    bad.append("results are not the two tasks in order")
for r, entry in zip(results, index):
    if r["status"] != want[r["task_id"]] or r["attempts"] != 1:
        bad.append("%s: %s after %d: %s" % (r["task_id"], r["status"], r["attempts"], r["detail"]))
    if not r["csv"] or entry["csv"] != r["csv"] or not os.path.isfile(r["csv"]):
        bad.append("%s: no final CSV in every output" % r["task_id"])
m = summary["methods"]["sample"]
if (m["correct"], m["total"], m["by_status"]["infra_error"]) != (1, 2, 0):
    bad.append("summary: %s" % m)
if summary.get("subset", {}).get("tasks") != 2:
    bad.append("summary does not say it counts a subset")
history = {}
for line in open(out + "/journal.jsonl"):
    r = json.loads(line)["result"]
    history.setdefault(r["task_id"], []).append(r["status"])
if history != {k: ["infra_error", v] for k, v in want.items()}:
    bad.append("journal history: %s" % history)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
# (of 2 tasks, 1 right: a quarter of the resamples draw neither, a quarter both)
grep -qx "sample: EX = 1/2 = 0.5000 over a subset: 2 of 30 task IDs (--tasks), 95% CI \[0.0000, 1.0000\]" "$tmp/rerun.txt" ||
    fail "no EX line: $(cat "$tmp/rerun.txt")"
echo "e2e_rerun: OK"
