#!/usr/bin/env bash
# tests/e2e/exec.sh: `streamex exec` on a real Kafka + Flink pair, one task per
# behaviour of the executor (tests/data/e2e-bench, made by its generate.py):
# filters, tumbling / hopping / session windows, a live-static join, an
# interval join, GROUP BY into an upsert sink, Top-N with retractions into a
# debezium sink, deduplication (all three changelog kinds), and the failures:
# syntax error, unknown column, runtime exception, updates into an
# append-only sink, timeout, statement rejected before Flink, missing
# prediction. Each task's printed verdict must be the one
# in expected.tsv, with the expected piece of detail; a match must print its
# final CSV and the changelog's figures (rows as many as the CSV's, insert -
# delete of them; an append sink inserts only); the mismatch must print its
# diff (exactly the orders of amount 10 to 20 extra); --changelog N prints N
# records of the kinds the sink's changelog has. After the timeout task no job may still be running (it was
# cancelled), --keep must say what it kept, and a worker that starts the
# pair again must sweep exactly that and count it.
# Uses pair index $SX_E2E_INDEX (default 2): started here, stopped at the end,
# unless it was already running.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/tests/data/e2e-bench"
index="${SX_E2E_INDEX:-2}"
rest="http://127.0.0.1:$((21000 + 20 * index + 2))"
gateway="http://127.0.0.1:$((21000 + 20 * index + 3))"
out=$(make_tmpdir)
started=0

cleanup() {
    if [ "$started" -eq 1 ]; then
        pair_down "$index"
    fi
}
at_exit cleanup


"$STREAMEX" check --bench "$bench" --method "e2e=$bench/predictions.jsonl" >/dev/null ||
    fail_later "the fixture bench does not pass streamex check"

if ! curl -sf "$gateway/v1/info" >/dev/null 2>&1; then
    echo "== starting pair $index"
    "$STREAMEX" runtime up --index "$index" --detach
    started=1
fi

running_jobs() {
    curl -sf "$rest/jobs/overview" | python3 -c '
import json, sys
print(sum(j["state"] not in ("FINISHED", "FAILED", "CANCELED")
          for j in json.load(sys.stdin)["jobs"]))'
}

while IFS=$'\t' read -r task status detail; do
    log="$out/$task.log"
    start=$(date +%s)
    code=0
    "$STREAMEX" exec --bench "$bench" --task "$task" --index "$index" \
        --method "e2e=$bench/predictions.jsonl" --output "$out/$task.csv" \
        >"$log" 2>"$out/$task.err" || code=$?
    echo "-- $task: $(head -n 1 "$log") ($(($(date +%s) - start)) s)"
    grep -q "^task $task: $status " "$log" ||
        fail_later "$task: expected $status; got: $(cat "$log" "$out/$task.err" | head -n 5)"
    if [ -n "$detail" ]; then
        grep -qF -- "$detail" "$log" || fail_later "$task: detail lacks '$detail': $(sed -n 2p "$log")"
    fi
    expected_code=1
    [ "$status" = match ] && expected_code=0
    [ "$code" -eq "$expected_code" ] || fail_later "$task: exit code $code, expected $expected_code"
    case "$status" in
    match | mismatch)
        [ -s "$out/$task.csv" ] || fail_later "$task: no final CSV"
        grep -q "^final CSV $out/$task.csv:" "$log" || fail_later "$task: final CSV not printed"
        ;;
    *) grep -q "^final CSV: none" "$log" || fail_later "$task: a $status should have no CSV" ;;
    esac
    case "$status" in
    match | mismatch)
        changelog=$(python3 - "$log" "$out/$task.csv" "$bench/tasks/$task/task.json" <<'PY'
import csv, json, re, sys
log, final_csv, task = sys.argv[1:]
line = next((l for l in open(log) if l.startswith("changelog: ")), "")
m = re.match(r"changelog: insert (\d+), update_before (\d+), update_after (\d+), "
             r"delete (\d+), tombstone (\d+); final relation (\d+) rows$", line.strip())
if not m:
    sys.exit(f"no changelog line: {line!r}")
i, ub, ua, d, t, rows = map(int, m.groups())
with open(final_csv, newline="") as f:
    lines = len(list(csv.reader(f))) - 1
kind = json.load(open(task))["sink"]["changelog"]
problems = []
if rows != lines or rows != i - d:
    problems.append(f"{rows} rows, the CSV has {lines}, insert - delete is {i - d}")
if kind == "append" and (ub, ua, d, t) != (0, 0, 0, 0):
    problems.append("an append sink with other records than inserts")
print("; ".join(problems) or "ok")
PY
        )
        [ "$changelog" = ok ] || fail_later "$task: changelog figures: $changelog"
        ;;
    *) grep -q "^changelog: none folded into a final CSV" "$log" ||
        fail_later "$task: a $status with changelog figures" ;;
    esac
    grep -q "^timings (s): prepare " "$log" || fail_later "$task: no timing breakdown"
    if [ "$task" = err_timeout ] && [ "$(running_jobs)" != 0 ]; then
        fail_later "a job still runs after the timeout task"
    fi
done <"$bench/expected.tsv"

echo "-- the mismatch's diff: every order of amount over 10 and up to 20 is extra"
extra=$(python3 -c '
import csv, sys
print(sum(10 < float(r["amount"]) <= 20 for r in csv.DictReader(open(sys.argv[1]))))' \
    "$bench/tasks/filter_mismatch/sources/orders.csv")
log="$out/filter_mismatch.log"
grep -q "^diff against gold (EX 0, strict 0), columns: gold \"order_id\" = prediction \"order_id\" (by \"name\")" \
    "$log" || fail_later "filter_mismatch: no diff header: $(grep '^diff' "$log")"
grep -qx "gold rows the final relation lacks: 0" "$log" || fail_later "filter_mismatch: rows lacking"
grep -q "^rows it has that gold lacks: $extra$" "$log" ||
    fail_later "filter_mismatch: expected $extra extra rows: $(grep '^rows it has' "$log")"
grep -q "^diff" "$out/filter.log" && fail_later "filter: a match with a diff"

echo "-- --changelog N prints the first N records, of the kinds of the sink"
for task in group_by_upsert top_n_debezium; do
    "$STREAMEX" exec --bench "$bench" --task "$task" --index "$index" --changelog 4 \
        --method "e2e=$bench/predictions.jsonl" >"$out/$task.trace" 2>&1 ||
        fail_later "$task --changelog: $(tail -n 3 "$out/$task.trace")"
    grep -qx "first 4 records of the changelog, as they came:" "$out/$task.trace" ||
        fail_later "$task: no records printed"
    kinds=$(sed -n 's/^  offset [0-9]*  \([a-z_+]*\)  key .*/\1/p' "$out/$task.trace" | sort -u | tr '\n' ' ')
    records=$(grep -c "^  offset " "$out/$task.trace" || true)
    [ "$records" = 4 ] || fail_later "$task: $records records printed, expected 4"
    case "$task" in
    group_by_upsert) allowed="insert update_after delete tombstone" ;;
    top_n_debezium) allowed="insert update_before+update_after delete tombstone" ;;
    esac
    for kind in $kinds; do
        [[ " $allowed " == *" $kind "* ]] || fail_later "$task: a record of kind $kind"
    done
done
grep -q "^  offset 0  insert  key {" "$out/group_by_upsert.trace" ||
    fail_later "group_by_upsert: the first record is no insert with its key"

echo "-- --keep keeps the task's topics and session"
# Without --output the final CSV goes to a folder under $TMPDIR, kept for
# the user to read: here, under this test's own folder.
TMPDIR="$out" "$STREAMEX" exec --bench "$bench" --task filter --index "$index" --keep --run-id "e2e-keep-$$" \
    --sql <(echo "SELECT order_id, UPPER(customer) AS customer, amount FROM orders WHERE amount > 20") \
    >"$out/keep.log" 2>&1 || fail_later "--keep run: $(tail -n 3 "$out/keep.log")"
grep -q "keeping topics sx\.e2e-keep-$$\.filter\.1\.\*, gateway session [0-9a-f-]\{36\} and job [0-9a-f]\{32\}" \
    "$out/keep.log" || fail_later "--keep did not say what it kept: $(grep keeping "$out/keep.log")"
session="$(sed -n 's/.*gateway session \([0-9a-f-]*\) and job.*/\1/p' "$out/keep.log")"
if [ -n "$session" ]; then
    curl -sf "$gateway/v1/sessions/$session" >/dev/null || fail_later "--keep closed session $session"
    curl -sf -X DELETE "$gateway/v1/sessions/$session" >/dev/null || true
fi

echo "-- a bad option is a usage error"
code=0
"$STREAMEX" exec --bench "$bench" --task filter >/dev/null 2>&1 || code=$?
[ "$code" -eq 2 ] || fail_later "exec without a candidate: exit $code, expected 2"
code=0
"$STREAMEX" exec --bench "$bench" --task nosuch --sql /dev/null --index "$index" \
    >/dev/null 2>&1 || code=$?
[ "$code" -eq 2 ] || fail_later "exec of an unknown task: exit $code, expected 2"

# The topics --keep left are what a crashed run leaves: a worker that starts
# the pair itself (so nobody else uses it) sweeps them before its first task
# and says how many things it removed, each deleted topic and cancelled job
# counted once. Only on a pair this test started (kafka-data outlives the
# pair's processes); one already running may be someone else's.
if [ "$started" -eq 1 ]; then
    echo "-- a worker that starts its pair sweeps what --keep left"
    pair_down "$index"
    "$STREAMEX" run --bench "$bench" --method "e2e=$bench/predictions.jsonl" --tasks filter \
        --workers 1 --first-index "$index" --no-cache --output "$out/sweep" \
        >"$out/sweep.log" 2>&1 || fail_later "sweeping run: $(tail -n 3 "$out/sweep.log")"
    for table in orders result; do
        grep -q "sweep: deleted topic sx\.e2e-keep-$$\.filter\.1\.$table left by an earlier run" \
            "$out/sweep.log" || fail_later "the sweep left the kept topic of $table"
    done
    removed=$(grep -c "sweep: \(deleted topic\|cancelled job\) " "$out/sweep.log" || true)
    grep -q "pair $index: swept $removed topic(s) and job(s) an earlier run left" "$out/sweep.log" ||
        fail_later "the sweep removed $removed, it says: $(grep -o 'swept .*' "$out/sweep.log")"
else
    echo "-- the sweep is not checked: pair $index was running before this test"
fi

finish e2e_exec
