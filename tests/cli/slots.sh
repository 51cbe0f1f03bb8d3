#!/usr/bin/env bash
# tests/cli/slots.sh: a worker runs --slots N tasks at once (issue 13), shown by a
# condition, not a clock: the simulated executor counts the tasks it has in
# hand at the same moment and logs the most ("at most K at once") when the
# worker ends. One worker, the first 8 tasks of the sample bench, 300 ms
# each: with --slots 4 the most is exactly 4 (never more: the worker holds
# 8 and starts no fifth while four run), with --slots 1 exactly 1; every
# task matches at its first attempt either way, and the coordinator's log
# says how many slots the worker announced. Bad --slots values are refused
# by run, worker and doctor, naming the option.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
sim_predictions "$bench" "$tmp/preds.jsonl"
tasks=$(IFS=,; echo "${ids[*]:0:8}")

for slots in 4 1; do
    echo "== run --workers 1 --slots $slots: at most $slots tasks at once"
    "$STREAMEX" run --simulate delay_ms=300 --workers 1 --slots "$slots" --bench "$bench" \
        --method "m=$tmp/preds.jsonl" --tasks "$tasks" --output "$tmp/out$slots" \
        > "$tmp/run$slots.out" 2> "$tmp/run$slots.log" || {
        tail -n 20 "$tmp/run$slots.log"
        fail "run --slots $slots failed"
    }
    grep -q "simulated executor: 8 task(s), at most $slots at once" "$tmp/run$slots.log" ||
        fail "--slots $slots: $(grep 'simulated executor' "$tmp/run$slots.log" || echo 'no count logged')"
    grep -q "worker w0 joined (capacity 2, $slots slot(s), simulated" "$tmp/run$slots.log" ||
        fail "--slots $slots: the coordinator did not log the worker's slots"
    python3 - "$tmp/out$slots/m/results.jsonl" "${ids[@]:0:8}" <<'EOF' || fail "see above"
import json, sys
results = [json.loads(line) for line in open(sys.argv[1])]
assert [r["task_id"] for r in results] == sys.argv[2:], [r["task_id"] for r in results]
for r in results:
    assert (r["status"], r["attempts"], r["worker"]) == ("match", 1, "w0"), r
EOF
done

echo "== bad --slots values are refused with the option named"
expect_refused() {
    local want="$1"
    shift
    set +e
    "$STREAMEX" "$@" > "$tmp/bad.txt" 2>&1
    local rc=$?
    set -e
    [ "$rc" = 2 ] || fail "$*: exit $rc, expected 2"
    grep -qF -- "$want" "$tmp/bad.txt" || fail "$*: no '$want' in: $(cat "$tmp/bad.txt")"
}
expect_refused "--slots '0': expected an integer in [1, 64]" \
    run --simulate delay_ms=0 --slots 0 --output "$tmp/bad0"
expect_refused "--slots '65': expected an integer in [1, 64]" \
    worker --connect "ipc://$tmp/none.ipc" --simulate delay_ms=0 --slots 65
expect_refused "--slots 'two': expected an integer in [1, 64]" \
    doctor --bench "$bench" --simulate delay_ms=0 --slots two
expect_refused "--repeat, --workers, --slots and --simulate are for the streaming check" \
    doctor --oracle batch --bench "$bench" --slots 2
echo "cli_slots: OK"
