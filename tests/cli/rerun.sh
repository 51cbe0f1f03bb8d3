#!/usr/bin/env bash
# tests/cli/rerun.sh: `--resume --rerun STATUS` and `--tasks` from the command line,
# with the simulated executor (no Kafka, no Flink). Infrastructure failures
# are injected from outside the predictions (--simulate infra_error=ID), so a
# rerun meets the same inputs and must turn them into their real verdicts:
# exact statuses in results.jsonl, submission.jsonl, the final CSVs and
# summary.json, the journal's history, the last line and the exit status (3
# while any infra_error is left), through `run` and through a coordinator
# with a worker process. Then --tasks: the subset and its plain marking,
# unknown IDs, and merge refusing a subset output unless --allow-subset.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
records() { grep -c "$2" "$1" || true; }

# Task 1 mismatches, task 2 has no prediction, every other task matches;
# tasks 3 and 4 are the ones whose infrastructure fails.
a=${ids[3]} b=${ids[4]}
preds="$tmp/preds.jsonl"
sim_predictions "$bench" "$preds" 1=mismatch 2=-

# run_sim OUT EXPECTED_EXIT SIMULATE [ARGS...]: streamex run, stdout in OUT.txt.
run_sim() {
    local out="$1" want="$2" sim="$3" code=0
    shift 3
    "$STREAMEX" -q run --workers 2 --simulate "$sim" --bench "$bench" --method "m=$preds" \
        --dead-after-ms 10000 --output "$out" "$@" > "$out.txt" 2> "$out.err" || code=$?
    [ "$code" = "$want" ] || fail "run $*: exit $code, expected $want: $(cat "$out.err")"
}

# expect OUT ID STATUS ATTEMPTS: the task's line in results.jsonl and
# submission.jsonl, and its CSV, are those of STATUS after ATTEMPTS ("[0-9]*"
# where a loaded machine may spend one on a worker it thinks lost; an
# infra_error always spends the whole budget).
expect() {
    local out="$1" id="$2" status="$3" attempts="$4"
    grep -q "^{\"task_id\":\"$id\",.*\"status\":\"$status\",.*\"attempts\":$attempts," \
        "$out/m/results.jsonl" || fail "$out: $id is not $status after $attempts: $(grep "\"$id\"" "$out/m/results.jsonl")"
    local csv="$out/m/csv/$id.csv"
    if [ "$status" = match ] || [ "$status" = mismatch ]; then
        grep -qxF "{\"task_id\":\"$id\",\"csv\":\"$(cd "$out" && pwd)/m/csv/$id.csv\"}" \
            "$out/m/submission.jsonl" || fail "$out: submission.jsonl has no CSV for $id"
        cmp -s "$csv" "$bench/gold/$id.csv" || fail "$out: $csv is not the final CSV"
    else
        grep -qxF "{\"task_id\":\"$id\",\"csv\":null}" "$out/m/submission.jsonl" ||
            fail "$out: submission.jsonl maps $id to a CSV"
        [ ! -e "$csv" ] || fail "$out: $csv left behind"
    fi
}

# summary OUT CORRECT INFRA: summary.json's figures, exactly.
summary() {
    python3 - "$1/summary.json" "$2" "$3" "$total" <<'EOF' || fail "$1/summary.json: $(cat "$1/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))["methods"]["m"]
correct, infra, total = map(int, sys.argv[2:])
sys.exit(not (s["correct"] == correct and s["total"] == total
              and s["ex"] == correct / total
              and s["by_status"]["infra_error"] == infra
              and s["by_status"]["mismatch"] == 1
              and s["by_status"]["missing_prediction"] == 1))
EOF
}

infra_line() { echo "infra_error: $1 task(s) ended on an infrastructure failure, not a verdict: rerun them with --resume --rerun infra_error"; }

echo "== two injected infra_errors: exit 3, said on the last line, scored 0"
out="$tmp/run"
run_sim "$out" 3 "delay_ms=2,infra_error=$a,infra_error=$b"
[ "$(tail -n 1 "$out.txt")" = "$(infra_line 2)" ] || fail "last line: $(tail -n 1 "$out.txt")"
expect "$out" "$a" infra_error 3
expect "$out" "$b" infra_error 3
expect "$out" "${ids[0]}" match "[0-9]*"
expect "$out" "${ids[1]}" mismatch "[0-9]*"
summary "$out" $((total - 4)) 2
[ "$(records "$out/journal.jsonl" '"result"')" = "$total" ] || fail "journal: not $total records"

echo "== bad --rerun: exit 2 with the reason, nothing run"
code=0
"$STREAMEX" -q run --simulate delay_ms=1 --bench "$bench" --method "m=$preds" --output "$out" \
    --resume --rerun infra_error,tiemout 2> "$tmp/err.txt" > /dev/null || code=$?
[ "$code" = 2 ] || fail "unknown status: exit $code"
grep -qF -- "--rerun 'infra_error,tiemout': unknown status 'tiemout'" "$tmp/err.txt" ||
    fail "no reason: $(cat "$tmp/err.txt")"
code=0
"$STREAMEX" -q run --simulate delay_ms=1 --bench "$bench" --method "m=$preds" --output "$out" \
    --rerun infra_error 2> "$tmp/err.txt" > /dev/null || code=$?
[ "$code" = 2 ] && grep -qF -- "--rerun needs --resume" "$tmp/err.txt" ||
    fail "--rerun without --resume: exit $code: $(cat "$tmp/err.txt")"
[ "$(records "$out/journal.jsonl" '"result"')" = "$total" ] || fail "a refused run journaled"
code=0
"$STREAMEX" -q worker --connect tcp://127.0.0.1:1 --simulate delay_ms=1 --rerun infra_error \
    2> "$tmp/err.txt" > /dev/null || code=$?
[ "$code" = 2 ] && grep -qF -- "--tasks and --rerun are the coordinator's options" "$tmp/err.txt" ||
    fail "worker --rerun: exit $code: $(cat "$tmp/err.txt")"

echo "== --rerun infra_error with one still broken: that one is left, exit 3"
run_sim "$out" 3 "delay_ms=2,infra_error=$b" --resume --rerun infra_error
[ "$(tail -n 1 "$out.txt")" = "$(infra_line 1)" ] || fail "last line: $(tail -n 1 "$out.txt")"
expect "$out" "$a" match "[0-9]*"
expect "$out" "$b" infra_error 3
summary "$out" $((total - 3)) 1

echo "== --rerun infra_error once the infrastructure works: every output exact, exit 0"
run_sim "$out" 0 "delay_ms=2" --resume --rerun infra_error
grep -qx "  m: EX = $((total - 2))/$total = .*" <(tail -n 2 "$out.txt" | head -n 1) ||
    fail "no EX line before the ending's report line: $(cat "$out.txt")"
! grep -q "^infra_error:" "$out.txt" || fail "an infra_error line with none left"
for i in "${!ids[@]}"; do
    case "$i" in
    1) expect "$out" "${ids[$i]}" mismatch "[0-9]*" ;;
    2) grep -q "\"${ids[$i]}\",.*\"missing_prediction\"" "$out/m/results.jsonl" || fail "missing" ;;
    *) expect "$out" "${ids[$i]}" match "[0-9]*" ;;
    esac
done
summary "$out" $((total - 2)) 0
[ "$(wc -l < "$out/m/results.jsonl")" = "$total" ] || fail "results.jsonl not $total lines"
[ "$(wc -l < "$out/m/submission.jsonl")" = "$total" ] || fail "submission not $total lines"
echo "== the journal keeps the history: $a infra_error then match, $b twice infra_error then match"
history() { grep "\"task_id\":\"$1\"" "$out/journal.jsonl" | sed 's/.*"status":"\([a-z_]*\)".*/\1/' | tr '\n' ' '; }
[ "$(history "$a")" = "infra_error match " ] || fail "history of $a: $(history "$a")"
[ "$(history "$b")" = "infra_error infra_error match " ] || fail "history of $b: $(history "$b")"
[ "$(records "$out/journal.jsonl" '"result"')" = $((total + 3)) ] || fail "journal records"

echo "== --resume again: the last records hold, nothing runs, outputs unchanged"
cp "$out/m/results.jsonl" "$tmp/before.jsonl"
run_sim "$out" 0 "delay_ms=2,infra_error=$a" --resume
# The same verdicts, worker and seconds aside.
strip() { sed 's/"seconds":[0-9.e-]*,"worker":"[^"]*"//' "$1"; }
diff <(strip "$tmp/before.jsonl") <(strip "$out/m/results.jsonl") || fail "outputs changed"
[ "$(records "$out/journal.jsonl" '"result"')" = $((total + 3)) ] || fail "a settled task ran again"

echo "== the same through a coordinator and a worker process"
dist="$tmp/dist"
# coordinate WANT SIMULATE [ARGS...]: a coordinator and one worker; its exit status.
coordinate() {
    local want="$1" sim="$2" code=0 p
    shift 2
    p=$(free_port)
    "$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$dist" \
        --bind "tcp://127.0.0.1:$p" --heartbeat-ms 200 --dead-after-ms 3000 "$@" \
        > "$dist.txt" &
    local coord=$!
    kill_at_exit "$coord"
    "$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --name w --simulate "$sim" \
        --work-dir "$tmp/wd" --heartbeat-ms 200 --dead-after-ms 3000 &
    kill_at_exit "$!"
    wait "$coord" || code=$?
    [ "$code" = "$want" ] || fail "coordinator $*: exit $code, expected $want"
}
coordinate 3 "delay_ms=2,infra_error=$a"
[ "$(tail -n 1 "$dist.txt")" = "$(infra_line 1)" ] || fail "last line: $(tail -n 1 "$dist.txt")"
expect "$dist" "$a" infra_error 3
coordinate 0 "delay_ms=2" --resume --rerun infra_error
expect "$dist" "$a" match "[0-9]*"
summary "$dist" $((total - 2)) 0
[ "$(grep -c "\"task_id\":\"$a\"" "$dist/journal.jsonl")" = 2 ] || fail "coordinator journal history"

echo "== --tasks: only the subset runs, and every output says so"
sub="$tmp/sub"
printf '%s\n\n%s\n' "${ids[1]}" "${ids[0]}" > "$tmp/ids.txt"
run_sim "$sub" 0 "delay_ms=2" --tasks "@$tmp/ids.txt"
[ "$(wc -l < "$sub/m/results.jsonl")" = 2 ] || fail "subset results not 2 lines"
[ "$(cut -d'"' -f4 "$sub/m/submission.jsonl" | tr '\n' ' ')" = "${ids[0]} ${ids[1]} " ] ||
    fail "subset not in task_ids.txt order"
# Of 2 tasks, 1 right: a quarter of the resamples draw neither, a quarter
# both, so the 95 % interval is [0, 1].
grep -qx "m: EX = 1/2 = 0.5000 over a subset: 2 of $total task IDs (--tasks), 95% CI \[0.0000, 1.0000\]" "$sub.txt" ||
    fail "no subset EX line: $(cat "$sub.txt")"
# The figures' last line, then the ending (output, EX line, report).
[ "$(tail -n 4 "$sub.txt" | head -n 1)" = "subset: every figure above counts 2 of the $total task IDs (--tasks)" ] ||
    fail "last line before the ending: $(tail -n 4 "$sub.txt" | head -n 1)"
[ "$(tail -n 2 "$sub.txt" | head -n 1)" = "  m: EX = 1/2 = 0.5000 over a subset: 2 of $total task IDs (--tasks), 95% CI [0.0000, 1.0000]; strict EX = 0.5000" ] ||
    fail "the ending's EX line: $(tail -n 2 "$sub.txt" | head -n 1)"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(not (s["subset"]["tasks"] == 2 and s["subset"]["bench_tasks"] == int(sys.argv[2]) and s["methods"]["m"]["total"] == 2 and s["methods"]["m"]["ex"] == 0.5))' \
    "$sub/summary.json" "$total" || fail "summary.json: $(cat "$sub/summary.json")"

echo "== --tasks with unknown IDs: exit 2 naming them"
code=0
"$STREAMEX" -q run --simulate delay_ms=1 --bench "$bench" --method "m=$preds" \
    --output "$tmp/never" --tasks "${ids[0]},nope,zz9" 2> "$tmp/err.txt" > /dev/null || code=$?
[ "$code" = 2 ] || fail "unknown IDs: exit $code"
grep -qF -- "--tasks: 2 ID(s) not in $bench/task_ids.txt: 'nope', 'zz9'" "$tmp/err.txt" ||
    fail "unknown IDs not named: $(cat "$tmp/err.txt")"

echo "== merge refuses a subset output unless --allow-subset"
code=0
"$STREAMEX" -q merge --bench "$bench" "$out" "$sub" --output "$tmp/merged" 2> "$tmp/err.txt" ||
    code=$?
[ "$code" = 2 ] || fail "merge with a subset: exit $code"
grep -qF "$sub is the output of a --tasks subset (2 of $total task IDs): merging it into a full output needs --allow-subset" \
    "$tmp/err.txt" || fail "merge: no reason: $(cat "$tmp/err.txt")"
"$STREAMEX" -q merge --bench "$bench" "$out" "$sub" --output "$tmp/merged" --allow-subset \
    > /dev/null || fail "merge --allow-subset failed"
[ "$(wc -l < "$tmp/merged/m/results.jsonl")" = "$total" ] || fail "merged not $total lines"
echo "cli_rerun: OK"
