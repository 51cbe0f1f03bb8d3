#!/usr/bin/env bash
# tests/e2e/samples.sh: several samples per task on the real runtime (one
# worker, its own Kafka + Flink pair, 4 slots). The sample bench (sb17's
# timeout at 30 s) with one method of 3 samples per task:
#   sample 0  examples/sample-bench/predictions.jsonl (its lines carry no
#             "sample": each task must get the status expected.jsonl gives)
#   sample 1  reference.jsonl: every task must match
#   sample 2  reference.jsonl with its first FROM misspelt FROMM: a syntax
#             error Flink's parser refuses, so every task is flink_error
# so EX is 17/30, 30/30 and 0/30, 47/90 = 0.5222 over the three. The run is
# stopped (SIGINT) once 40 units are journaled and finished with --resume;
# then --resume --rerun flink_error executes exactly the flink_error units
# again (those 30 of sample 2 and sample 0's 3) and the figures stay the
# same. Checked: every (task, sample)'s status in results.jsonl, the printed
# EX lines, summary.json's per-sample figures, samples/K/submission.jsonl and
# the journal's record counts. Pair index $SX_E2E_SAMPLES_INDEX (default 90),
# started and stopped by the runs.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
index="${SX_E2E_SAMPLES_INDEX:-90}"
require_runtime "${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
tmp=$(make_tmpdir)
at_exit "pair_down $index"
bench="$tmp/bench"
sample_short_timeout "$bench"
out="$tmp/out"

python3 - "$bench" "$tmp/preds.jsonl" "$tmp/expected.txt" <<'EOF'
import json, re, sys
bench, preds, expected_path = sys.argv[1:]
ids = open(bench + "/task_ids.txt").read().split()
status0 = {e["task_id"]: e["status"] for e in map(json.loads, open(bench + "/expected.jsonl"))}
reference = [json.loads(l) for l in open(bench + "/reference.jsonl")]
assert sorted(r["task_id"] for r in reference) == sorted(ids)
with open(preds, "w") as out:
    out.write(open(bench + "/predictions.jsonl").read())
    for r in reference:
        out.write(json.dumps({"task_id": r["task_id"], "sql": r["sql"], "sample": 1}) + "\n")
    for r in reference:
        broken, n = re.subn(r"\bFROM\b", "FROMM", r["sql"], count=1)
        assert n == 1, r
        out.write(json.dumps({"task_id": r["task_id"], "sql": broken, "sample": 2}) + "\n")
with open(expected_path, "w") as out:
    for task in ids:
        for k, status in enumerate((status0[task], "match", "flink_error")):
            out.write(f"{task} {k} {status}\n")
EOF
units=$(wc -l < "$tmp/expected.txt")
correct() { awk -v k="$1" '$2 == k && $3 == "match"' "$tmp/expected.txt" | wc -l | tr -d ' '; }
[ "$(correct 0)/$(correct 1)/$(correct 2)" = 17/30/0 ] || fail "expectations are not 17/30/0"
# The EX lines (strict EX, which no independent figure states here, cut off).
ex_lines="m: EX = 47/90 = 0.5222 (mean over 3 samples of 30 task IDs)
m: sample 0: EX = 17/30 = 0.5667
m: sample 1: EX = 30/30 = 1.0000
m: sample 2: EX = 0/30 = 0.0000"

# run LOG [ARGS...]: the sampled run on pair $index, its log in LOG.
run() {
    local log="$1"
    shift
    "$STREAMEX" run --bench "$bench" --method "m=$tmp/preds.jsonl" --output "$out" \
        --workers 1 --slots 4 --first-index "$index" "$@" > "$log" 2>&1
}

# check LABEL LOG: every output says what the expectations do.
check() {
    local label="$1" log="$2"
    diff "$tmp/expected.txt" <(sed 's/^{"task_id":"\([^"]*\)","sample":\([0-9]\),.*"status":"\([a-z_]*\)".*/\1 \2 \3/' \
        "$out/m/results.jsonl") || fail "$label: statuses differ (see above; log $log)"
    # (the mean's 95 % interval cut off too: tests/cli/figures.sh checks it)
    [ "$(grep -E "^m: (EX|sample [0-9]+: EX) = " "$log" | sed -E 's/, strict EX = .*//; s/, 95% CI \[[0-9.]+, [0-9.]+\]$//')" = "$ex_lines" ] ||
        fail "$label: EX lines: $(grep "^m: " "$log")"
    python3 - "$out" "$tmp/expected.txt" <<'EOF' || fail "$label: summary.json or submissions"
import json, sys
out, expected = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(expected)]
m = json.load(open(out + "/summary.json"))["methods"]["m"]
assert (m["samples"], m["total"], m["correct"]) == (3, 30, 47), m
assert [(p["correct"], p["ex"]) for p in m["per_sample"]] == [(17, 17 / 30), (30, 1.0), (0, 0.0)], m
assert m["ex"] == 47 / 90 and m["by_status"]["flink_error"] == 33, m
for k in range(3):
    lines = [json.loads(l) for l in open(f"{out}/m/samples/{k}/submission.jsonl")]
    want = [r for r in rows if r[1] == str(k)]
    assert [l["task_id"] for l in lines] == [r[0] for r in want], k
    for line, row in zip(lines, want):
        has_csv = row[2] in ("match", "mismatch")
        assert (line["csv"] is not None) == has_csv, (k, line, row)
        assert not has_csv or line["csv"].endswith(("/m/csv/" if k == 0 else f"/m/samples/{k}/csv/") + row[0] + ".csv"), line
assert open(out + "/m/submission.jsonl").read() == open(out + "/m/samples/0/submission.jsonl").read()
EOF
}

echo "== the run, stopped (SIGINT) once 40 units are journaled"
# Started directly, not through run(): a signal to a backgrounded function
# reaches its subshell, which passes nothing on.
"$STREAMEX" run --bench "$bench" --method "m=$tmp/preds.jsonl" --output "$out" \
    --workers 1 --slots 4 --first-index "$index" > "$tmp/first.log" 2>&1 &
first=$!
kill_at_exit "$first"
# Up to 10 minutes: the pair starts first (wait_records' 60 s may be short).
for _ in $(seq 1200); do
    [ "$(records "$out/journal.jsonl" '"result"')" -ge 40 ] 2> /dev/null && break
    kill -0 "$first" 2> /dev/null || fail "the run ended early: $(tail -n 20 "$tmp/first.log")"
    sleep 0.5
done
kill -INT "$first"
code=0
wait "$first" || code=$?
[ "$code" = 1 ] || fail "the stopped run exited $code, expected 1: $(tail -n 5 "$tmp/first.log")"
settled=$(records "$out/journal.jsonl" '"result"')
[ "$settled" -ge 40 ] && [ "$settled" -lt "$units" ] || fail "journal: $settled records after the stop"
echo "stopped with $settled of $units units journaled"

echo "== --resume finishes it: each unit journaled once"
run "$tmp/resume.log" --resume || fail "resume failed: $(tail -n 20 "$tmp/resume.log")"
check "resumed run" "$tmp/resume.log"
[ "$(records "$out/journal.jsonl" '"result"')" = "$units" ] || fail "a unit was executed twice"
grep "^m: " "$tmp/resume.log"

echo "== --resume --rerun flink_error: the 33 flink_error units again, the same figures"
run "$tmp/rerun.log" --resume --rerun flink_error || fail "rerun failed: $(tail -n 20 "$tmp/rerun.log")"
grep -q -- "--rerun flink_error: 33 settled task(s) run again" "$tmp/rerun.log" ||
    fail "rerun: $(grep -- --rerun "$tmp/rerun.log")"
check "rerun" "$tmp/rerun.log"
[ "$(records "$out/journal.jsonl" '"result"')" = $((units + 33)) ] || fail "rerun: not 33 more records"
echo "e2e_samples: OK"
