#!/usr/bin/env bash
# tests/cli/eta.sh: the progress ETA counts a task in flight with the time it
# has already run, and a task past the usual time pushes the ETA out instead
# of it staying at a fraction of a second; then the ending every run prints
# (cli/ending.h), off a terminal: the output folder, each method's EX line,
# report.html's path and, for a non-zero exit, what it means.
# Simulated executor: six tasks on one slot, the last ten times slower
# (/*sim:slow*/), progress every 100 ms.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
ids=$(head -6 "$bench/task_ids.txt" | paste -sd, -)
sim_predictions "$bench" "$tmp/preds.jsonl" 5=slow
out="$tmp/out"
"$STREAMEX" run --bench "$bench" --method m="$tmp/preds.jsonl" --output "$out" \
    --tasks "$ids" --workers 1 --slots 1 --simulate delay_ms=300 --progress-ms 100 \
    > "$tmp/stdout" 2> "$tmp/stderr" || fail "run exited $? ($(tail -3 "$tmp/stderr"))"

# While the slow task is the one left: every line has an ETA, and the last
# one before the end is at least what that task has run past the others'
# usual 0.3 s (it runs about 3 s): the whole-run average (elapsed / done x
# left) would say under a second there.
python3 - "$tmp/stdout" << 'PY' || fail "ETA while the slow task runs (progress lines above)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
waiting = [l for l in lines if l["done"] == l["total"] - 1 and l["total"] == 6]
assert waiting, "no progress line while only the slow task was left"
assert all(l["eta_s"] is not None for l in waiting), waiting
last = waiting[-1]
average = last["elapsed_s"] / last["done"] * 1
print(f"last line with one task left: elapsed {last['elapsed_s']} s, "
      f"ETA {last['eta_s']} s (the run's average would say {average:.2f} s)")
assert last["eta_s"] >= 1.5, last
assert lines[-1]["done"] == 6 and lines[-1]["eta_s"] == 0.0, lines[-1]
PY

abs=$(cd "$out" && pwd)
tail -3 "$tmp/stdout" > "$tmp/ending"
diff - "$tmp/ending" << EOF || fail "the run's ending differs (above)"
output: $abs
  m: EX = 6/6 = 1.0000 over a subset: 6 of 30 task IDs (--tasks), 95% CI [1.0000, 1.0000]; strict EX = 1.0000
report: $abs/report.html (open it in a browser, e.g. xdg-open $abs/report.html)
EOF

# A run that ends with infra_error exits 3 and says what that means last.
status=0
"$STREAMEX" run --bench "$bench" --method m="$tmp/preds.jsonl" --output "$tmp/out3" \
    --tasks "$(head -2 "$bench/task_ids.txt" | paste -sd, -)" --workers 1 \
    --simulate "delay_ms=0,infra_error=$(head -1 "$bench/task_ids.txt")" --retries 1 \
    > "$tmp/stdout3" 2> "$tmp/stderr3" || status=$?
[ "$status" = 3 ] || fail "a run ending with infra_error exited $status, not 3"
diff - <(tail -2 "$tmp/stdout3") << 'EOF' || fail "the ending of an exit-3 run differs (above)"
exit 3: every task settled, but some ended infra_error (next line)
infra_error: 1 task(s) ended on an infrastructure failure, not a verdict: rerun them with --resume --rerun infra_error
EOF
# (of 2 tasks, 1 right: a quarter of the resamples draw neither, a quarter both)
grep -qxF "  m: EX = 1/2 = 0.5000 over a subset: 2 of 30 task IDs (--tasks), 95% CI [0.0000, 1.0000]; strict EX = 0.5000" "$tmp/stdout3" || fail "no EX line in the exit-3 ending"
echo "cli_eta: OK"
