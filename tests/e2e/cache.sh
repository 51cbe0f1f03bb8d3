#!/usr/bin/env bash
# tests/e2e/cache.sh: the result cache on the real runtime. The sample bench runs
# twice with one cache folder (the default one, under $XDG_CACHE_HOME): the
# first run executes everything (EX = 17/30, every status as expected.jsonl
# says) and stores the 23 match/mismatch CSVs; the second gets the same
# verdicts with exactly those 23 tasks "cached": true, and neither the
# worker's executor nor Flink saw them: no executor line names them in the
# worker's debug log, and Flink's JobManager (whose log starts afresh with
# the pair) received no job but the warm-up's and those of the tasks not
# cached. Then one candidate changes: in a --tasks run of it and two cached
# tasks, only it executes (one job submitted).
# The bench is a copy whose sb17 (a timeout, never cached) waits 30 s instead
# of 120 s, so each run pays it once, briefly; its verdict is the same.
# One worker on pair $SX_E2E_CACHE_INDEX (default 160; cli_runtime uses 150), started and stopped
# by each run.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
index="${SX_E2E_CACHE_INDEX:-160}"
runtime_dir="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
jobmanager_log="$runtime_dir/pairs/$index/logs/jobmanager.log"
require_runtime "$runtime_dir"
tmp=$(make_tmpdir)
at_exit "pair_down $index"

bench="$tmp/bench"
sample_short_timeout "$bench"
preds="$tmp/preds.jsonl"
cp "$bench/predictions.jsonl" "$preds"
cache="$tmp/xdg/streamex"

# run_real OUT [ARGS...]: one worker on the pair, debug log in OUT.log.
run_real() {
    local out="$1"
    shift
    env -u SX_CACHE_DIR XDG_CACHE_HOME="$tmp/xdg" "$STREAMEX" -v run --workers 1 \
        --first-index "$index" --bench "$bench" --method "sample=$preds" --output "$out" \
        "$@" > "$out.log" 2>&1 || { tail -n 30 "$out.log"; fail "streamex run $* failed"; }
}
ids_where() { python3 - "$@" <<'PY'
import json, sys
out, field, value = sys.argv[1:]
for line in open(out + "/sample/results.jsonl"):
    r = json.loads(line)
    if str(r.get(field, False)).lower() == value or r.get(field) == value:
        print(r["task_id"])
PY
}
# submitted LOG: jobs Flink's JobManager received since the pair started.
submitted() { grep -c "Received JobGraph submission" "$jobmanager_log" || true; }
summary_cached() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["methods"]["sample"]["cached"])' "$1/summary.json"; }

echo "== first run: everything executed, 23 CSVs cached"
run_real "$tmp/o1"
python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$tmp/o1" sample=predictions
first_jobs=$(submitted)
[ "$(find "$cache/v2" -type f | wc -l)" = 23 ] || fail "$(find "$cache/v2" -type f | wc -l) cache entries, expected 23"
[ "$(summary_cached "$tmp/o1")" = 0 ] || fail "first run: cached $(summary_cached "$tmp/o1")"
[ "$first_jobs" -gt 23 ] || fail "first run: Flink received $first_jobs jobs"

echo "== second run: the same verdicts, the 23 from the cache, Flink never sees them"
run_real "$tmp/o2"
python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$tmp/o2" sample=predictions
scored=$( (ids_where "$tmp/o1" status match; ids_where "$tmp/o1" status mismatch) | sort)
[ "$(ids_where "$tmp/o2" cached true | sort)" = "$scored" ] ||
    fail "cached: $(ids_where "$tmp/o2" cached true | tr '\n' ' ')"
[ "$(summary_cached "$tmp/o2")" = 23 ] || fail "summary.json cached: $(summary_cached "$tmp/o2")"
grep -q "^sample: 23 of 30 results from the result cache (scored again, not executed)$" "$tmp/o2.log" ||
    fail "no cache line in the run's output"
for id in $scored; do
    # The executor names a task bare ("task ID: job ... submitted"), the
    # agent as METHOD/ID: in the first run each was submitted, in the second
    # the executor never mentions it.
    grep -q "task $id: job .* submitted" "$tmp/o1.log" || fail "first run: $id never submitted"
    ! grep -qE "task $id(:| attempt)" "$tmp/o2.log" ||
        fail "the executor saw cached task $id: $(grep -E "task $id(:| attempt)" "$tmp/o2.log" | head -n 3)"
    grep -q "task sample/$id attempt 1: [a-z]* (.*, from the result cache)" "$tmp/o2.log" ||
        fail "no cache hit logged for $id"
    cmp -s "$tmp/o1/sample/csv/$id.csv" "$tmp/o2/sample/csv/$id.csv" || fail "$id: CSV differs"
done
# The warm-up job, sb17's (timeout) and those of the flink_errors that got
# as far as a job; never one per cached task.
second_jobs=$(submitted)
uncached_jobs=$(grep -c "task [a-z0-9_]*: job .* submitted" "$tmp/o2.log" || true)
[ "$second_jobs" = $((uncached_jobs + 1)) ] ||
    fail "Flink received $second_jobs jobs, the worker submitted $uncached_jobs (+1 warm-up)"
[ "$second_jobs" -le 5 ] || fail "Flink received $second_jobs jobs in the second run"

echo "== one changed candidate: only it executes"
python3 - "$preds" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for l in lines:
    if l["task_id"] == "sb03_auctions_without_reserve":
        l["sql"] += " "
open(sys.argv[1], "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
run_real "$tmp/o3" --tasks sb01_high_bids,sb03_auctions_without_reserve,sb06_large_trades
[ "$(ids_where "$tmp/o3" cached true | tr '\n' ' ')" = "sb01_high_bids sb06_large_trades " ] ||
    fail "cached after the change: $(ids_where "$tmp/o3" cached true | tr '\n' ' ')"
grep -q '"task_id":"sb03_auctions_without_reserve",.*"status":"match"' "$tmp/o3/sample/results.jsonl" ||
    fail "sb03: $(grep sb03 "$tmp/o3/sample/results.jsonl")"
[ "$(grep -c "task [a-z0-9_]*: job .* submitted" "$tmp/o3.log")" = 1 ] &&
    grep -q "task sb03_auctions_without_reserve: job .* submitted" "$tmp/o3.log" ||
    fail "not exactly sb03 submitted: $(grep 'submitted' "$tmp/o3.log")"
[ "$(submitted)" = 2 ] || fail "Flink received $(submitted) jobs (expected the warm-up and sb03's)"
[ "$(find "$cache/v2" -type f | wc -l)" = 24 ] || fail "the changed candidate's CSV was not stored"
wall() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["wall_seconds"])' "$1/summary.json"; }
echo "e2e_cache: OK (wall time of the first run $(wall "$tmp/o1") s, $first_jobs Flink jobs;" \
    "of the second $(wall "$tmp/o2") s, 23 of 30 cached, $second_jobs Flink jobs)"
