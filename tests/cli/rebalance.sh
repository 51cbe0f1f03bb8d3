#!/usr/bin/env bash
# tests/cli/rebalance.sh: no task waits behind another (issue 13). `run` with two
# workers at the default shard size (4) and capacity (2), the simulated
# executor and the first 8 tasks of the sample bench, one slot per worker
# (--slots 1: with four, a shard's tasks run side by side and none waits):
# the first task is slow (ten times the delay: 2 s), the others short
# (200 ms). The three other tasks of the slow task's shard must be run by
# the other worker once it is idle (RECALL / RELEASE), at their first
# attempt, instead of waiting 2 s on the slow task's worker. The check is on results.jsonl's
# worker field, not on a clock: whichever worker takes which shard first,
# the other one is idle long before the slow task ends.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
sim_predictions "$bench" "$tmp/preds.jsonl" "0+= /*sim:slow*/"
tasks=$(IFS=,; echo "${ids[*]:0:8}")

echo "== run --workers 2: the tasks queued behind the slow one go to the idle worker"
start=$(date +%s.%N)
"$STREAMEX" -q run --simulate delay_ms=200 --workers 2 --slots 1 --bench "$bench" \
    --method "m=$tmp/preds.jsonl" --tasks "$tasks" --output "$tmp/out" > /dev/null ||
    fail "run failed"
echo "wall time: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" \
    "$start" "$(date +%s.%N)")"
python3 - "$tmp/out/m/results.jsonl" "${ids[@]:0:8}" <<'EOF' || fail "see above"
import json, sys
results = {r["task_id"]: r for r in map(json.loads, open(sys.argv[1]))}
ids = sys.argv[2:]
assert sorted(results) == sorted(ids), f"results for {sorted(results)}, expected {ids}"
for r in results.values():
    assert r["status"] == "match" and r["attempts"] == 1, f"{r['task_id']}: {r}"
slow = results[ids[0]]["worker"]
behind = {i: results[i]["worker"] for i in ids[1:4]}
if any(worker == slow for worker in behind.values()):
    sys.exit(f"FAIL: the slow task ran on {slow}; the tasks of its shard ran on {behind}")
EOF
echo "cli_rebalance: OK"
