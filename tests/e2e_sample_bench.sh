#!/usr/bin/env bash
# e2e_sample_bench.sh: the bundled sample benchmark through the whole
# pipeline (`streamex run`: coordinator, two workers, each with its own Kafka + Flink).
# Two methods: reference.jsonl must score 30/30 (gold, computed by the
# example's independent oracle, agrees with Flink), and predictions.jsonl
# must get, task by task, the status in expected.jsonl and so the EX that
# examples/sample-bench/README.md states. The workers use pair indexes 0 and 1,
# started and stopped by streamex run itself.
set -euo pipefail
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
out="$(mktemp -d "${TMPDIR:-/tmp}/sx-e2e-sample.XXXXXX")"
# The output stays for inspection when the test fails.
trap 'if [ $? -eq 0 ]; then rm -rf "$out"; else echo "output kept in $out"; fi' EXIT

"$STREAMEX" run --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --method "reference=$bench/reference.jsonl" --output "$out" --workers 2 \
    >"$out/run.log" 2>&1 || {
    tail -n 30 "$out/run.log"
    echo "FAIL: streamex run exited with an error"
    exit 1
}
grep "EX =" "$out/run.log" || true

python3 - "$bench" "$out" <<'EOF'
import json, sys
bench, out = sys.argv[1], sys.argv[2]
ids = open(bench + "/task_ids.txt").read().split()
expected = [json.loads(line) for line in open(bench + "/expected.jsonl")]
summary = json.load(open(out + "/summary.json"))["methods"]
failures = []

def results(method):
    return [json.loads(line) for line in open("%s/%s/results.jsonl" % (out, method))]

ref = results("reference")
for r in ref:
    if r["status"] != "match":
        failures.append("reference %s: %s (%s)" % (r["task_id"], r["status"], r["detail"]))
if [r["task_id"] for r in ref] != ids:
    failures.append("reference results are not one per task in task_ids.txt order")

sample = results("sample")
if [r["task_id"] for r in sample] != [e["task_id"] for e in expected]:
    failures.append("sample results are not one per task in expected.jsonl order")
for r, e in zip(sample, expected):
    if r["status"] != e["status"]:
        failures.append("sample %s: %s, expected %s (%s); detail: %s"
                        % (r["task_id"], r["status"], e["status"], e["why"], r["detail"]))

correct = sum(e["status"] == "match" for e in expected)
stated = "`sample` = %d/%d = %.4f" % (correct, len(ids), correct / len(ids))
if stated not in open(bench + "/README.md").read():
    failures.append("README.md does not state %s" % stated)
for method, want in (("sample", correct), ("reference", len(ids))):
    s = summary[method]
    if (s["correct"], s["total"]) != (want, len(ids)) or abs(s["ex"] - want / len(ids)) > 1e-9:
        failures.append("summary %s: %s, expected %d/%d" % (method, s, want, len(ids)))

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("e2e_sample_bench: OK (sample %d/%d, reference %d/%d)"
      % (correct, len(ids), len(ids), len(ids)))
EOF
