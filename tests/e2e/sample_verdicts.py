#!/usr/bin/env python3
# sample_verdicts.py BENCH OUT METHOD=KIND...: checks the output of a run of
# the bundled sample bench, for tests/e2e/sample_bench.sh, tests/e2e/compose.sh and
# tests/e2e/slurm.sh (one set of expectations, however the run was deployed). KIND
# is
#   predictions  the method ran examples/sample-bench/predictions.jsonl: each
#                task must get the status in expected.jsonl, and so the EX
#                that the bench's README.md states;
#   reference    the method ran reference.jsonl: every task must match.
# Both: one result per task, in task_ids.txt order, and summary.json agrees.
# Prints one FAIL line per problem and exits 1, or prints the EX and exits 0.
import json
import sys


def results(out, method):
    with open("%s/%s/results.jsonl" % (out, method)) as f:
        return [json.loads(line) for line in f]


def check(bench, out, methods):
    ids = open(bench + "/task_ids.txt").read().split()
    expected = [json.loads(line) for line in open(bench + "/expected.jsonl")]
    summary = json.load(open(out + "/summary.json"))["methods"]
    failures, scores = [], []
    if [e["task_id"] for e in expected] != ids:
        failures.append("expected.jsonl is not one line per task in task_ids.txt order")
    for method, kind in methods:
        got = results(out, method)
        if [r["task_id"] for r in got] != ids:
            failures.append("%s: results are not one per task in task_ids.txt order" % method)
        if kind == "reference":
            want = [{"task_id": i, "status": "match", "why": "gold"} for i in ids]
        else:
            want = expected
        for r, e in zip(got, want):
            if r["status"] != e["status"]:
                failures.append("%s %s: %s, expected %s (%s); detail: %s"
                                % (method, r["task_id"], r["status"], e["status"],
                                   e["why"], r["detail"]))
        correct = sum(e["status"] == "match" for e in want)
        if kind == "predictions":
            stated = "`sample` = %d/%d = %.4f" % (correct, len(ids), correct / len(ids))
            if stated not in open(bench + "/README.md").read():
                failures.append("README.md does not state %s" % stated)
        s = summary.get(method)
        if s is None or (s["correct"], s["total"]) != (correct, len(ids)) or \
                abs(s["ex"] - correct / len(ids)) > 1e-9:
            failures.append("summary %s: %s, expected %d/%d" % (method, s, correct, len(ids)))
        scores.append("%s %d/%d" % (method, correct, len(ids)))
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("verdicts as expected (%s)" % ", ".join(scores))
    return 0


def main(argv):
    if len(argv) < 4 or any(a.partition("=")[2] not in ("predictions", "reference")
                            for a in argv[3:]):
        sys.exit("usage: sample_verdicts.py BENCH OUT METHOD=predictions|reference...")
    return check(argv[1], argv[2], [a.partition("=")[::2] for a in argv[3:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
