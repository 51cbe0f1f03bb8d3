#!/usr/bin/env bash
# tests/e2e/repeat.sh: `--repeat 3` and `doctor --bench --repeat` on the real
# runtime. Three tasks of the sample bench: sb01 with its reference (a
# deterministic query: stable, match), sb06 with a candidate that writes
# PROCTIME() into a column and sb03 one that writes CURRENT_TIMESTAMP: their
# final relations change from run to run, so `run --repeat 3` must flag both
# "stable": false with runs 2 and 3 kept as CSVs, keep the first run's
# verdicts, and count 2 unstable tasks; no run comes from the result cache,
# although the cache holds these very tasks from a plain run before. Then
# `doctor --bench` on a bench whose references are those three queries lists
# sb03 and sb06 as not stable (and as not matching gold), exit 1.
# One worker on pair $SX_E2E_REPEAT_INDEX (default 162), started and stopped
# by each run.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
index="${SX_E2E_REPEAT_INDEX:-162}"
runtime_dir="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
require_runtime "$runtime_dir"
tmp=$(make_tmpdir)
at_exit "pair_down $index"

bench="$tmp/bench"
cp -r "$SX_SOURCE_DIR/examples/sample-bench" "$bench"
printf '%s\n' sb01_high_bids sb03_auctions_without_reserve sb06_large_trades > "$bench/task_ids.txt"
preds="$tmp/preds.jsonl"
cat > "$preds" <<'JSONL'
{"task_id": "sb01_high_bids", "sql": "SELECT bid_id, auction, price FROM bids WHERE price > 50"}
{"task_id": "sb03_auctions_without_reserve", "sql": "SELECT auction_id, CAST(CURRENT_TIMESTAMP AS STRING) AS item_name FROM auctions WHERE reserve_price IS NULL"}
{"task_id": "sb06_large_trades", "sql": "SELECT trade_id, CAST(PROCTIME() AS STRING) AS symbol, trade_time, price * qty AS notional FROM trades WHERE qty >= 300"}
JSONL
cache="$tmp/cache"

# run_real OUT [ARGS...]: one worker on the pair, log in OUT.log.
run_real() {
    local out="$1"
    shift
    "$STREAMEX" run --workers 1 --first-index "$index" --bench "$bench" --method "m=$preds" \
        --output "$out" --cache "$cache" "$@" > "$out.log" 2>&1 ||
        { tail -n 30 "$out.log"; fail "streamex run $* failed"; }
}

echo "== a plain run fills the cache"
run_real "$tmp/plain"
[ "$(find "$cache/v2" -type f | wc -l)" = 3 ] || fail "$(find "$cache/v2" -type f | wc -l) cache entries"

echo "== --repeat 3: sb03 (CURRENT_TIMESTAMP) and sb06 (PROCTIME()) are not stable"
run_real "$tmp/out" --repeat 3
python3 - "$tmp/out" <<'PY' || fail "results or summary wrong"
import json, os, sys
out = sys.argv[1]
got = {r["task_id"]: r for r in map(json.loads, open(out + "/m/results.jsonl"))}
summary = json.load(open(out + "/summary.json"))["methods"]["m"]
want = {"sb01_high_bids": ("match", True),
        "sb03_auctions_without_reserve": ("mismatch", False),
        "sb06_large_trades": ("mismatch", False)}
bad = ["%s: %s stable %s, expected %s stable %s" % (t, got[t]["status"], got[t].get("stable"), s, st)
       for t, (s, st) in want.items() if (got[t]["status"], got[t].get("stable")) != (s, st)]
bad += ["%s: served from the cache" % t for t in got if got[t].get("cached")]
kept = sorted(f for f in os.listdir(out + "/m/csv") if ".run" in f)
want_kept = sorted("%s.run%d.csv" % (t, k) for t in ("sb03_auctions_without_reserve", "sb06_large_trades") for k in (2, 3))
if kept != want_kept:
    bad.append("kept CSVs: %s" % kept)
if (summary["unstable"], summary["repeats"], summary["cached"], summary["correct"]) != (2, 3, 0, 1):
    bad.append("summary: %s" % {k: summary[k] for k in ("unstable", "repeats", "cached", "correct")})
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
grep -qxF 'm: 2 of 3 tasks not stable over 3 runs (results.jsonl: "stable": false)' "$tmp/out.log" ||
    fail "no unstable line: $(grep 'not stable' "$tmp/out.log")"
grep -q "m/sb01_high_bids run 3 of 3 on w0: the same relation" "$tmp/out.log" || fail "sb01's run 3 not compared"
[ "$(grep -c "from the result cache" "$tmp/out.log" || true)" = 0 ] || fail "a repeat came from the cache"

echo "== doctor --bench --repeat 2 with these as the references: sb03 and sb06 listed"
cp "$preds" "$bench/reference.jsonl"
code=0
"$STREAMEX" doctor --bench "$bench" --repeat 2 --index "$index" --output "$tmp/doctor" \
    > "$tmp/doctor.txt" 2> "$tmp/doctor.log" || code=$?
cat "$tmp/doctor.txt"
[ "$code" = 1 ] || fail "doctor: exit $code: $(tail -n 20 "$tmp/doctor.log")"
grep -qxF "doctor: 3 tasks, each reference run 2 time(s): 1 match gold and are stable, 2 do not match gold, 2 not stable, 0 without a reference (output in $tmp/doctor)" \
    "$tmp/doctor.txt" || fail "doctor's summary line"
for t in sb03_auctions_without_reserve sb06_large_trades; do
    grep -q "^task $t: the reference is not stable over 2 runs" "$tmp/doctor.txt" || fail "$t not listed unstable"
    grep -q "^task $t: the reference does not match gold: mismatch" "$tmp/doctor.txt" || fail "$t not listed wrong"
done
! grep -q "^task sb01_high_bids" "$tmp/doctor.txt" || fail "sb01 listed"
echo "e2e_repeat: OK"
