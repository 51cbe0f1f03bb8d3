#!/usr/bin/env bash
# tests/cli/run_simulated.sh: the distributed run from the command line, with the
# simulated executor (no Kafka, no Flink): `run --workers N`, Ctrl-C and
# --resume, --shard I/N + merge, a coordinator with separate worker
# processes (one killed mid-run), CURVE with keygen, and the plain-TCP rule.
# Predictions carry /*sim:STATUS*/ markers so every status occurs and each
# task's verdict is known in advance: every check compares all 30 statuses
# and the exact EX, so a swapped or lost verdict fails. No step waits on a
# sleep: each waits for a journal record or a log line, with a deadline.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
lines() { wc -l < "$1" | tr -d ' '; }
verdicts() {
    sed 's/.*"task_id":"\([^"]*\)".*"status":"\([^"]*\)".*"attempts":\([0-9]*\).*/\1 \2 \3/' "$1"
}

# The mixed predictions: task i gets the i-th status of this cycle (flaky is
# infra_error on attempt 1, then match; missing has no line at all). Expected
# "ID STATUS ATTEMPTS": infra_error spends the whole retry budget (3).
cycle=(match mismatch flink_error timeout materialize_error input_error eval_error
       infra_error rejected_sql flaky missing)
preds="$tmp/mixed.jsonl"
: > "$preds"
: > "$tmp/expected.txt"
i=0
correct=0
while read -r id; do
    kind=${cycle[$((i % ${#cycle[@]}))]}
    i=$((i + 1))
    case "$kind" in
    missing) echo "$id missing_prediction 0" >> "$tmp/expected.txt"; continue ;;
    flaky) echo "$id match 2" >> "$tmp/expected.txt"; correct=$((correct + 1)) ;;
    match) echo "$id match 1" >> "$tmp/expected.txt"; correct=$((correct + 1)) ;;
    infra_error) echo "$id infra_error 3" >> "$tmp/expected.txt" ;;
    *) echo "$id $kind 1" >> "$tmp/expected.txt" ;;
    esac
    printf '{"task_id": "%s", "sql": "SELECT 1 /*sim:%s*/"}\n' "$id" "$kind" >> "$preds"
done < "$bench/task_ids.txt"
ex_line="m: EX = $correct/$total = $(python3 -c "print(f'{$correct/$total:.4f}')")"

# Every status and attempt count of OUT/m/results.jsonl is the expected one,
# in task_ids order, and the summary's count of correct tasks too. With a 3rd
# argument only statuses are compared: a killed worker's tasks may have
# spent an attempt with it.
check_verdicts() {
    local out="$1" label="$2" fields=3
    [ $# -lt 3 ] || fields=2
    diff <(cut -d' ' -f1-$fields "$tmp/expected.txt") \
        <(verdicts "$out/m/results.jsonl" | cut -d' ' -f1-$fields) ||
        fail "$label: verdicts differ from the expected ones"
    [ "$(lines "$out/m/submission.jsonl")" = "$total" ] || fail "$label: submission not $total lines"
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["methods"]["m"]; sys.exit(s["correct"] != int(sys.argv[2]) or s["total"] != int(sys.argv[3]))' \
        "$out/summary.json" "$correct" "$total" || fail "$label: summary.json is not $correct/$total"
}

# The changelog figures of OUT/m/results.jsonl: a task with a final CSV
# (match, mismatch) has the simulated append changelog, one insert per
# data row of its gold (counted here with Python's csv module, blank lines
# not rows), and no other kind; every other task has none.
check_changelog() {
    python3 - "$1/m/results.jsonl" "$bench" "$2" <<'PY' || fail "$2: changelog figures"
import csv, json, sys
path, bench, label = sys.argv[1:]
bad = 0
for line in open(path):
    r = json.loads(line)
    got = r.get("changelog")
    if r["status"] in ("match", "mismatch"):
        with open(f"{bench}/gold/{r['task_id']}.csv", newline="") as f:
            rows = sum(1 for row in list(csv.reader(f))[1:] if row)
        want = {"insert": rows, "update_before": 0, "update_after": 0, "delete": 0,
                "tombstone": 0, "rows": rows}
    else:
        want = None
    if got != want:
        print(f"{label}: {r['task_id']} {r['status']}: changelog {got}, expected {want}")
        bad += 1
sys.exit(bad > 0)
PY
}

# expect_exit CODE CMD...: CMD exits CODE. A finished run of the mixed
# predictions exits 3: some tasks end infra_error (in every --shard I/3 too).
expect_exit() {
    local want="$1" code=0
    shift
    "$@" || code=$?
    [ "$code" = "$want" ] || fail "$*: exit $code, expected $want"
}

echo "== run --workers 2: every status as expected, $ex_line"
expect_exit 3 "$STREAMEX" -q run --simulate delay_ms=5 --workers 2 --bench "$bench" \
    --method "m=$preds" --output "$tmp/full" > "$tmp/full.txt"
grep -Eqx "$ex_line$SX_CI_RE" "$tmp/full.txt" || fail "no '$ex_line' line: $(cat "$tmp/full.txt")"
check_verdicts "$tmp/full" "full run"
check_changelog "$tmp/full" "full run"

echo "== an existing output needs --resume; --resume on a finished run does nothing new"
if "$STREAMEX" -q run --simulate delay_ms=5 --bench "$bench" --method "m=$preds" \
    --output "$tmp/full" 2> "$tmp/err.txt"; then
    fail "reused an output without --resume"
fi
grep -q -- "--resume" "$tmp/err.txt" || fail "no hint about --resume"
expect_exit 3 "$STREAMEX" -q run --simulate delay_ms=5 --bench "$bench" --method "m=$preds" \
    --resume --output "$tmp/full" > /dev/null
check_verdicts "$tmp/full" "resumed finished run"

echo "== Ctrl-C stops a run once 5 tasks are settled; --resume finishes only what is left"
# 500 ms a task on one worker: after the 5th record 20-odd tasks (10 s) remain.
rc=0
"$STREAMEX" -q run --simulate delay_ms=500 --workers 1 --bench "$bench" --method "m=$preds" \
    --output "$tmp/cut" > /dev/null 2> "$tmp/cut.err" &
cut=$!
kill_at_exit "$cut"
wait_records "$tmp/cut/journal.jsonl" '"result"' 5
kill -INT "$cut"
wait "$cut" || rc=$?
[ "$rc" = 1 ] || fail "interrupted run exited $rc, expected 1"
settled=$(records "$tmp/cut/journal.jsonl" '"result"')
[ "$settled" -ge 5 ] && [ "$settled" -lt "$total" ] || fail "journal has $settled records"
[ ! -f "$tmp/cut/m/results.jsonl" ] || fail "an interrupted run wrote final results"
expect_exit 3 "$STREAMEX" -q run --simulate delay_ms=5 --workers 2 --bench "$bench" \
    --method "m=$preds" --resume --output "$tmp/cut" > /dev/null
check_verdicts "$tmp/cut" "resumed run"
check_changelog "$tmp/cut" "resumed run"
[ "$(records "$tmp/cut/journal.jsonl" '"result"')" = "$total" ] ||
    fail "a settled task was executed again"

echo "== --shard I/N runs merge into the full run's verdicts"
for i in 0 1 2; do
    expect_exit 3 "$STREAMEX" -q run --simulate delay_ms=5 --bench "$bench" \
        --method "m=$preds" --shard "$i/3" --output "$tmp/s$i" > /dev/null
done
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" "$tmp/s1" --output "$tmp/partial" \
    > /dev/null 2>&1 && fail "merge with a shard missing reported success"
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" "$tmp/s1" "$tmp/s2" --output "$tmp/merged" \
    > /dev/null
check_verdicts "$tmp/merged" "merged shards"
check_changelog "$tmp/merged" "merged shards"
# The diffs of the misses (the mismatch tasks) come along from the shards.
[ -n "$(ls "$tmp/full/m/diff")" ] || fail "the full run wrote no diff"
[ "$(ls "$tmp/merged/m/diff")" = "$(ls "$tmp/full/m/diff")" ] ||
    fail "merged diffs: $(ls "$tmp/merged/m/diff" | tr '\n' ' ')"

echo "== coordinator and two worker processes; one is killed mid-run"
p=$(free_port)
"$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$tmp/dist" \
    --bind "tcp://127.0.0.1:$p" --heartbeat-ms 100 --dead-after-ms 600 > "$tmp/dist.txt" &
coord=$!
kill_at_exit "$coord"
"$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --name doomed --simulate delay_ms=100 \
    --work-dir "$tmp/wd1" --heartbeat-ms 100 &
doomed=$!
kill_at_exit "$doomed"
wait_records "$tmp/dist/journal.jsonl" '"worker":"doomed"' 1
kill -9 "$doomed"
"$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --name survivor --simulate delay_ms=5 \
    --work-dir "$tmp/wd2" --heartbeat-ms 100 &
kill_at_exit "$!"
expect_exit 3 wait "$coord"
check_verdicts "$tmp/dist" "coordinator with a killed worker" statuses-only
grep -q '"worker":"survivor"' "$tmp/dist/m/results.jsonl" || fail "survivor did no work"

echo "== CURVE: only allow-listed workers get work"
"$STREAMEX" keygen coord --dir "$tmp/keys" > /dev/null
"$STREAMEX" keygen good --dir "$tmp/keys" > /dev/null
"$STREAMEX" keygen coord --dir "$tmp/keys" > /dev/null 2>&1 && fail "keygen overwrote a key"
mkdir "$tmp/allow"
cp "$tmp/keys/good.cert" "$tmp/allow/"
p=$(free_port)
"$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$tmp/curve" \
    --bind "tcp://127.0.0.1:$p" --cert "$tmp/keys/coord.cert" --allow "$tmp/allow" \
    > /dev/null &
coord=$!
kill_at_exit "$coord"
"$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --simulate delay_ms=1 \
    --cert "$tmp/keys/good.cert" --server-cert "$tmp/keys/coord.cert" --work-dir "$tmp/wd3" &
kill_at_exit "$!"
expect_exit 3 wait "$coord"
check_verdicts "$tmp/curve" "CURVE run"

echo "== plain TCP off loopback is refused without --insecure"
if "$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$tmp/plain" \
    --bind "tcp://*:$(free_port)" 2> "$tmp/err.txt"; then
    fail "plain TCP on * accepted"
fi
grep -q -- "--insecure" "$tmp/err.txt" || fail "no hint about --insecure"
echo "== bad outputs and a bad --simulate: exit 2 with the reason, before anything exists"
# expect_usage_error WANT ARGS...: streamex ARGS exits 2 and says WANT.
expect_usage_error() {
    local want="$1" code=0
    shift
    "$STREAMEX" -q "$@" >/dev/null 2>"$tmp/err.txt" || code=$?
    [ "$code" = 2 ] || fail "$*: exit $code, expected 2"
    grep -qF -- "$want" "$tmp/err.txt" || fail "$*: no '$want' in: $(cat "$tmp/err.txt")"
}
expect_usage_error "streamex run: the output path is empty" run --simulate delay_ms=1 --output ""
expect_usage_error "streamex run: --simulate 'fast': unknown or bad item 'fast'" \
    run --simulate fast --output "$tmp/never"
[ ! -e "$tmp/never" ] || fail "a bad --simulate created its output"
expect_usage_error "is not a folder" run --simulate delay_ms=1 --output "$preds/out"
expect_usage_error "streamex coordinator: the output path is empty" \
    coordinator --bench "$bench" --method "m=$preds" --output "" --bind "tcp://127.0.0.1:$(free_port)"
expect_usage_error "streamex merge: the output path is empty" \
    merge --bench "$bench" --output "" "$tmp/full"
echo "cli_run_simulated: OK"
