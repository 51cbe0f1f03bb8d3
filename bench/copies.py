#!/usr/bin/env python3
"""copies.py SAMPLE BENCH N [SAMPLES]: writes BENCH, N task IDs made from the
bench SAMPLE's tasks (the bundled sample's 30): copy k of sample task T under
the ID T__k (its task.json, sources, gold and evaluation; the IDs cycle
through the sample in order), and BENCH/predictions.jsonl, the sample's
reference.jsonl for every copy, each copy's SQL made distinct by a trailing
comment /* scale copy k */, so no cache could serve one copy from another.
With SAMPLES > 1, every copy has that many samples ("sample": 0 to
SAMPLES - 1), each sample's SQL distinct too (/* scale copy k sample j */).
bench/scale, bench/floor (through bench/lib.sh) and bench/samples make their benches with it."""
import json
import os
import shutil
import sys


def main():
    sample, bench, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    samples = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    ids = open(sample + "/task_ids.txt").read().split()
    sql = {r["task_id"]: r["sql"] for r in map(json.loads, open(sample + "/reference.jsonl"))}
    os.makedirs(bench + "/gold")
    os.makedirs(bench + "/evaluation")
    new_ids, predictions = [], []
    for k in range(count):
        task = ids[k % len(ids)]
        new = "%s__%d" % (task, k)
        shutil.copytree("%s/tasks/%s" % (sample, task), "%s/tasks/%s" % (bench, new))
        path = "%s/tasks/%s/task.json" % (bench, new)
        spec = json.load(open(path))
        spec["task_id"] = new
        json.dump(spec, open(path, "w"), indent=2)
        shutil.copy("%s/gold/%s.csv" % (sample, task), "%s/gold/%s.csv" % (bench, new))
        shutil.copy("%s/evaluation/%s.json" % (sample, task),
                    "%s/evaluation/%s.json" % (bench, new))
        new_ids.append(new)
        if samples == 1:
            predictions.append({"task_id": new, "sql": "%s /* scale copy %d */" % (sql[task], k)})
            continue
        for j in range(samples):
            predictions.append({"task_id": new, "sample": j,
                                "sql": "%s /* scale copy %d sample %d */" % (sql[task], k, j)})
    open(bench + "/task_ids.txt", "w").write("".join(i + "\n" for i in new_ids))
    with open(bench + "/predictions.jsonl", "w") as f:
        for p in predictions:
            f.write(json.dumps(p) + "\n")


if __name__ == "__main__":
    main()
