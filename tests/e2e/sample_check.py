"""sample_check.py BENCH OUT [reference]: asserts a run of the bundled
sample bench (examples/sample-bench) in OUT, however it was run (one
`streamex run`, shards merged, a coordinator and its workers): method
`sample` (predictions.jsonl) has, task by task, the status expected.jsonl
gives, and so the EX the bench's README.md states; with `reference`,
method `reference` (reference.jsonl) matches on every task. Results are
one per task, in task_ids.txt order (every ID exactly once), and
summary.json agrees. Prints FAIL lines and exits 1, or one OK line."""
import json
import sys

bench, out = sys.argv[1], sys.argv[2]
with_reference = sys.argv[3:] == ["reference"]
ids = open(bench + "/task_ids.txt").read().split()
expected = [json.loads(line) for line in open(bench + "/expected.jsonl")]
summary = json.load(open(out + "/summary.json"))["methods"]
failures = []


def results(method):
    return [json.loads(line) for line in open("%s/%s/results.jsonl" % (out, method))]


if with_reference:
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
wants = [("sample", correct)] + ([("reference", len(ids))] if with_reference else [])
for method, want in wants:
    s = summary[method]
    if (s["correct"], s["total"]) != (want, len(ids)) or abs(s["ex"] - want / len(ids)) > 1e-9:
        failures.append("summary %s: %s, expected %d/%d" % (method, s, want, len(ids)))

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("sample_check: OK (%s)" % ", ".join("%s %d/%d" % (m, w, len(ids)) for m, w in wants))
