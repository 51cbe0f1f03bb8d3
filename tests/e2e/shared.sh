#!/usr/bin/env bash
# tests/e2e/shared.sh: replay once, execute many, and a gateway session of
# each task's own, on the real Kafka + Flink (one worker, pair index 0,
# started and stopped by streamex run itself).
# 1. Tables never leak from one task into the next on one executor: six
#    tasks over the same table names (`bids`, `out_t`), every DDL with IF
#    NOT EXISTS, so a table a task before left would be silently kept and
#    read (its rows, not the task's own: a mismatch); some TEMPORARY, one
#    failing in Flink (division by zero). Each must get its own verdict.
# 2. The sample bench with two methods (predictions and reference) on one
#    worker: every task of both gets the status a private replay gives it
#    (tests/e2e/sample_verdicts.py: EX 17/30 and 30/30), and the worker
#    replays each distinct prepared source once: as many replays as the
#    sample has distinct (CSV content, kind, projection, time conversion,
#    event time) sources, serving every source of every task of both methods.
# ctest: pairs 0
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
out=$(make_tmpdir) # kept for inspection when the test fails
bench="$out/bench"

# ---- 1. the isolation bench -------------------------------------------------
# task ID, first id, TEMPORARY or not, the candidate
tasks=(
    "tA 1 no SELECT id FROM bids"
    "tB 11 yes SELECT id FROM bids"
    "tC 21 no SELECT id / (id - id) FROM bids"
    "tD 31 no SELECT id FROM bids"
    "tE 41 yes SELECT id FROM bids"
    "tF 51 no SELECT id FROM bids"
)
mkdir -p "$bench/gold" "$bench/evaluation"
: >"$bench/task_ids.txt"
: >"$bench/preds.jsonl"
for line in "${tasks[@]}"; do
    read -r id first temporary sql <<<"$line"
    create="CREATE TABLE IF NOT EXISTS"
    [ "$temporary" = no ] || create="CREATE TEMPORARY TABLE IF NOT EXISTS"
    mkdir -p "$bench/tasks/$id/sources"
    printf 'id,ts\n%d,2024-01-01 00:00:01\n%d,2024-01-01 00:00:02\n' "$first" \
        "$((first + 1))" >"$bench/tasks/$id/sources/bids.csv"
    printf 'id\n%d\n%d\n' "$first" "$((first + 1))" >"$bench/gold/$id.csv"
    echo '{"ignore_order": true}' >"$bench/evaluation/$id.json"
    echo "$id" >>"$bench/task_ids.txt"
    python3 - "$bench/tasks/$id/task.json" "$id" "$create" <<'PY'
import json, sys
path, task_id, create = sys.argv[1:]
kafka = ("WITH ('connector'='kafka','topic'='${topic}',"
         "'properties.bootstrap.servers'='${bootstrap}','format'='json')")
json.dump({
    "task_id": task_id, "question": "the ids",
    "sources": [{"name": "bids", "kind": "live", "file": "sources/bids.csv",
                 "columns": [{"name": "id"},
                             {"name": "ts", "time": {"from": "%Y-%m-%d %H:%M:%S", "to": "sql"}}],
                 "event_time": "ts",
                 "ddl": create + " bids (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) " + kafka}],
    "sink": {"name": "out_t", "changelog": "append",
             "ddl": create + " out_t (id BIGINT) " + kafka},
    "output_schema": [{"name": "id", "type": "BIGINT"}],
    "timeout_s": 60}, open(path, "w"))
PY
    python3 -c 'import json,sys; print(json.dumps({"task_id": sys.argv[1], "sql": sys.argv[2]}))' \
        "$id" "$sql" >>"$bench/preds.jsonl"
done

"$STREAMEX" run --bench "$bench" --method "m=$bench/preds.jsonl" --output "$out/isolation" \
    --workers 1 --no-cache >"$out/isolation.log" 2>&1 || {
    tail -n 30 "$out/isolation.log"
    fail "streamex run on the isolation bench exited with an error"
}
python3 - "$out/isolation/m/results.jsonl" <<'PY' || fail "a task saw another task's table"
import json, sys
want = {"tA": "match", "tB": "match", "tC": "flink_error", "tD": "match", "tE": "match",
        "tF": "match"}
got = {r["task_id"]: (r["status"], r["detail"]) for r in map(json.loads, open(sys.argv[1]))}
bad = [(t, got[t], s) for t, s in want.items() if got[t][0] != s]
for t, (status, detail), s in bad:
    print("FAIL: %s: %s (%s), expected %s" % (t, status, detail, s))
assert "/ by zero" in got["tC"][1], got["tC"]
sys.exit(1 if bad else 0)
PY

# ---- 2. the sample, two methods, one worker ---------------------------------
# (sb17's timeout at 30 s: tests/kit/lib.sh sample_short_timeout)
sample="$out/sample-bench"
sample_short_timeout "$sample"
"$STREAMEX" run --bench "$sample" --method "sample=$sample/predictions.jsonl" \
    --method "reference=$sample/reference.jsonl" --output "$out/sample" --workers 1 \
    --no-cache >"$out/sample.log" 2>&1 || {
    tail -n 30 "$out/sample.log"
    fail "streamex run on the sample exited with an error"
}
python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$sample" "$out/sample" \
    sample=predictions reference=reference
# What the worker should replay: one per distinct prepared source, and what
# it should serve: every source of every task that got that far, per method.
read -r distinct declared < <(python3 - "$sample" "$out/sample" <<'PY'
import hashlib, json, sys
bench, out = sys.argv[1:]
keys, declared = set(), 0
reached = {}
for method in ("sample", "reference"):
    for r in map(json.loads, open("%s/%s/results.jsonl" % (out, method))):
        reached[(method, r["task_id"])] = r["status"] not in ("missing_prediction", "rejected_sql")
for task_id in open(bench + "/task_ids.txt").read().split():
    task = json.load(open("%s/tasks/%s/task.json" % (bench, task_id)))
    for s in task["sources"]:
        content = hashlib.sha1(open("%s/tasks/%s/%s" % (bench, task_id, s["file"]), "rb").read()).hexdigest()
        columns = [(c["name"], c.get("from", c["name"]), json.dumps(c.get("time"), sort_keys=True))
                   for c in s["columns"]]
        keys.add((content, s["kind"], repr(columns), s.get("event_time")))
    declared += len(task["sources"]) * sum(reached[(m, task_id)] for m in ("sample", "reference"))
print(len(keys), declared)
PY
)
want="shared source topics: $distinct replay(s) served $declared task source(s)"
grep -q "$want" "$out/sample.log" || {
    grep "shared source topics" "$out/sample.log" >&2 || true
    fail "expected '$want'"
}
echo "e2e_shared: OK ($want)"
