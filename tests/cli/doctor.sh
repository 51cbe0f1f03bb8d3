#!/usr/bin/env bash
# tests/cli/doctor.sh: `streamex doctor --bench B --repeat N` (the streaming check
# of a bench's reference queries) with the simulated executor: a reference
# that mismatches gold and one whose relation changes from run to run are
# listed, with the kept CSVs of the other runs, the summary line counts
# them exactly, the exit status is 1; with good references only, 0. The
# options of the two checks are not mixed.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
refs="$tmp/reference.jsonl"
sim_predictions "$bench" "$refs" 0=mismatch 1=unstable 3=-

echo "== one wrong, one unstable, one without a reference: listed, exit 1"
code=0
"$STREAMEX" -q doctor --bench "$bench" --reference "$refs" --repeat 3 --workers 2 \
    --simulate delay_ms=2 --output "$tmp/d" > "$tmp/out.txt" 2> "$tmp/err.txt" || code=$?
[ "$code" = 1 ] || fail "exit $code: $(cat "$tmp/err.txt")"
cat "$tmp/out.txt"
grep -qxF "doctor: $total tasks, each reference run 3 time(s): $((total - 3)) match gold and are stable, 1 do not match gold, 1 not stable, 1 without a reference (output in $tmp/d)" \
    "$tmp/out.txt" || fail "summary line"
grep -qx "task ${ids[0]}: the reference does not match gold: mismatch" "$tmp/out.txt" || fail "mismatch not listed"
grep -qxF "task ${ids[1]}: the reference is not stable over 3 runs (final CSV $tmp/d/reference/csv/${ids[1]}.csv)" \
    "$tmp/out.txt" || fail "unstable not listed"
for k in 2 3; do
    grep -qxF "  run $k: $tmp/d/reference/csv/${ids[1]}.run$k.csv" "$tmp/out.txt" || fail "run $k not named"
    [ -f "$tmp/d/reference/csv/${ids[1]}.run$k.csv" ] || fail "run $k not kept"
done
[ "$(grep -c '^task ' "$tmp/out.txt")" = 2 ] || fail "more tasks listed than the two"

echo "== good references: exit 0"
grep -v "sim:mismatch\|sim:unstable" "$refs" > "$tmp/good.jsonl"
code=0
"$STREAMEX" -q doctor --bench "$bench" --reference "$tmp/good.jsonl" --repeat 2 \
    --simulate delay_ms=2 --output "$tmp/g" > "$tmp/out.txt" 2> "$tmp/err.txt" || code=$?
[ "$code" = 0 ] || fail "good references: exit $code: $(cat "$tmp/out.txt" "$tmp/err.txt")"
grep -qx "doctor: $total tasks, each reference run 2 time(s): $((total - 3)) match gold and are stable, 0 do not match gold, 0 not stable, 3 without a reference (output in .*)" \
    "$tmp/out.txt" || fail "summary: $(cat "$tmp/out.txt")"

echo "== the two checks' options are not mixed"
code=0
"$STREAMEX" doctor --oracle batch --bench "$bench" --repeat 2 > /dev/null 2> "$tmp/err.txt" || code=$?
[ "$code" = 2 ] && grep -qF -- "--repeat, --workers, --slots and --simulate are for the streaming check" "$tmp/err.txt" ||
    fail "--oracle batch --repeat: exit $code"
code=0
"$STREAMEX" doctor --bench "$bench" --flink-rest http://127.0.0.1:1 > /dev/null 2> "$tmp/err.txt" || code=$?
[ "$code" = 2 ] && grep -qF -- "--flink-gateway and --flink-rest are for --oracle batch" "$tmp/err.txt" ||
    fail "streaming --flink-rest: exit $code"
echo "cli_doctor: OK"
