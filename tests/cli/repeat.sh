#!/usr/bin/env bash
# tests/cli/repeat.sh: `run --repeat N` with the simulated executor (no Kafka, no
# Flink). Every task with a final CSV runs N times, each repeat on the other
# worker of two; a candidate whose final relation changes from run to run
# (/*sim:unstable*/) is "stable": false with its other runs' CSVs kept as
# csv/ID.runK.csv, every other repeated task "stable": true with no extra
# CSV, a missing prediction is not repeated; verdicts and EX are the first
# run's; summary.json and the printed line count the unstable tasks; and a
# repeat never comes from the result cache, even a filled one.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)

preds="$tmp/preds.jsonl"
sim_predictions "$bench" "$preds" 0=mismatch 1=- 2=unstable
unstable=${ids[2]}

echo "== a cache filled by a plain run first"
"$STREAMEX" -q run --workers 2 --simulate delay_ms=2 --cache "$tmp/cache" --bench "$bench" \
    --method "m=$preds" --output "$tmp/plain" > /dev/null 2>&1 || fail "plain run failed"

echo "== --repeat 3: one unstable task, caught; the cache not used"
out="$tmp/out"
"$STREAMEX" run --workers 2 --simulate delay_ms=2 --cache "$tmp/cache" --repeat 3 \
    --bench "$bench" --method "m=$preds" --output "$out" > "$out.txt" 2> "$out.err" ||
    fail "run --repeat 3: exit $?: $(tail -n 5 "$out.err")"
grep -qx "m: EX = $((total - 2))/$total = .*" "$out.txt" || fail "EX: $(grep 'EX =' "$out.txt")"
grep -qxF "m: 1 of $total tasks not stable over 3 runs (results.jsonl: \"stable\": false)" "$out.txt" ||
    fail "no unstable line: $(cat "$out.txt")"
python3 - "$out" "$unstable" "${ids[1]}" "$total" <<'PY' || fail "results or summary wrong"
import json, os, sys
out, unstable, missing, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
results = [json.loads(l) for l in open(out + "/m/results.jsonl")]
summary = json.load(open(out + "/summary.json"))["methods"]["m"]
bad = []
for r in results:
    want = None if r["task_id"] == missing else r["task_id"] != unstable
    if r.get("stable") != want:
        bad.append("%s: stable %s, expected %s" % (r["task_id"], r.get("stable"), want))
    if r.get("cached"):
        bad.append("%s: served from the cache" % r["task_id"])
extra = sorted(f for f in os.listdir(out + "/m/csv") if ".run" in f)
if extra != [unstable + ".run2.csv", unstable + ".run3.csv"]:
    bad.append("kept CSVs: %s" % extra)
if (summary["unstable"], summary["repeats"], summary["cached"], summary["correct"]) != (1, 3, 0, total - 2):
    bad.append("summary: %s" % summary)
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
for k in 2 3; do
    ! cmp -s "$out/m/csv/$unstable.csv" "$out/m/csv/$unstable.run$k.csv" || fail "run $k kept but the same"
done

echo "== every repeat ran on the other worker than the run before it"
repeated=$((total - 1))
for k in 2 3; do
    [ "$(grep -c "run $k of 3 on w[01]: " "$out.err")" = "$repeated" ] ||
        fail "run $k: $(grep -c "run $k of 3 on" "$out.err") repeats logged, expected $repeated"
done
python3 - "$out.err" "$out/m/results.jsonl" <<'PY' || fail "a repeat ran on the same worker as the run before it"
import json, re, sys
first = {json.loads(l)["task_id"]: json.loads(l)["worker"] for l in open(sys.argv[2])}
last = dict(first)
for line in open(sys.argv[1]):
    m = re.search(r"m/(\S+) run (\d) of 3 on (w[01]):", line)
    if m:
        task, worker = m.group(1), m.group(3)
        if worker == last[task]:
            print("%s run %s on %s again" % (task, m.group(2), worker))
            sys.exit(1)
        last[task] = worker
PY

echo "== --repeat is the coordinator's: a worker refuses it, and it needs N >= 1"
code=0
"$STREAMEX" worker --connect tcp://127.0.0.1:1 --simulate delay_ms=1 --repeat 2 \
    > /dev/null 2> "$tmp/err.txt" || code=$?
[ "$code" = 2 ] && grep -qF -- "--repeat, --tasks and --rerun are the coordinator's options" "$tmp/err.txt" ||
    fail "worker --repeat: exit $code: $(cat "$tmp/err.txt")"
code=0
"$STREAMEX" run --simulate delay_ms=1 --repeat 0 --bench "$bench" --method "m=$preds" \
    --output "$tmp/zero" > /dev/null 2> "$tmp/err.txt" || code=$?
[ "$code" = 2 ] && grep -qF -- "--repeat '0': expected an integer in [1, 100]" "$tmp/err.txt" ||
    fail "--repeat 0: exit $code: $(cat "$tmp/err.txt")"
echo "cli_repeat: OK"
