#!/usr/bin/env python3
"""report.py: the verdict of the differential test. Reads the generated
benchmark (its oracle/ID.json says each task's shape and the known Flink
differences it may hit) and streamex's output for it, and classifies every
task that does not match its BATCH gold:
  flink:global_aggregate_empty  gold is the one row batch gives for a global
                                aggregate over no rows, streaming gives none
  flink:order_ties              a dedup or ROWS OVER ordered by a tied time
  flink:top1_rank               on Flink 2.2.1 only, a Top-1 ordered by no time
                                attribute kept rows it replaced: its planner
                                takes the Rank for insert-only and drops the
                                retractions (EXPLAIN CHANGELOG_MODE: [I])
  infra:STATUS                  timeout or infra_error (the run, not a result)
  unexplained                   anything else: a streamex defect until shown
                                otherwise (the diff of rows is printed)
A match is also checked row for row: the final CSV must hold exactly gold's
rows (as a multiset of CSV text rows), so no EX match hides a wrong row;
one that does not is "match_hides_rows", and counts as unexplained.
Prints per-shape figures and writes OUT/differential.json. Exit status 1
when a non-match is unexplained or infra, 0 otherwise.

    report.py --bench BENCH --output OUT [--method NAME] [--wall SECONDS]
"""

import argparse
import collections
import csv
import json
import os
import sys


def read_rows(path):
    if not path or not os.path.exists(path):
        return None
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [tuple(r) for r in csv.reader(f) if r]
    return collections.Counter(rows[1:])


def classify(oracle, result, gold, pred):
    status = result["status"]
    if status in ("timeout", "infra_error"):
        return f"infra:{status}"
    known = oracle.get("known", [])
    if status == "mismatch" and pred is not None and gold is not None:
        if ("global_aggregate_empty" in known and sum(gold.values()) == 1
                and not pred):
            return "flink:global_aggregate_empty"
        if "order_ties" in known:
            return "flink:order_ties"
        if ("top1_rank" in known and result.get("engine", "").startswith("flink-2.2.1/")
                and not gold - pred):
            return "flink:top1_rank"
    return "unexplained"


def diff_text(gold, pred, limit=3):
    if gold is None or pred is None:
        return "no CSV"
    missing = list((gold - pred).elements())[:limit]
    extra = list((pred - gold).elements())[:limit]
    return f"only in gold {missing}; only in streamex {extra}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--method", default="diff")
    parser.add_argument("--wall", type=float, default=0.0,
                        help="wall seconds of the streamex run, for time per task")
    args = parser.parse_args()
    out = os.path.join(args.output, args.method)
    with open(os.path.join(out, "submission.jsonl")) as f:
        csvs = {e["task_id"]: e["csv"] for e in map(json.loads, f)}
    per_shape = collections.defaultdict(collections.Counter)
    findings, seconds = [], []
    with open(os.path.join(out, "results.jsonl")) as f:
        results = [json.loads(line) for line in f]
    for result in results:
        task_id = result["task_id"]
        with open(os.path.join(args.bench, "oracle", task_id + ".json"),
                  encoding="utf-8") as f:
            oracle = json.load(f)
        shape = oracle["shape"]
        per_shape[shape]["tasks"] += 1
        seconds.append(result.get("seconds") or 0)
        gold = read_rows(os.path.join(args.bench, "gold", task_id + ".csv"))
        pred = read_rows(csvs.get(task_id))
        if result["status"] == "match" and gold == pred:
            per_shape[shape]["match"] += 1
            continue
        if result["status"] == "match":
            verdict = "match_hides_rows"
        else:
            verdict = classify(oracle, result, gold, pred)
        per_shape[shape][verdict] += 1
        findings.append({"task_id": task_id, "shape": shape, "class": verdict,
                         "status": result["status"], "detail": result.get("detail", ""),
                         "diff": diff_text(gold, pred), "sql": oracle["sql"]})
    classes = sorted({k for c in per_shape.values() for k in c} - {"tasks", "match"})
    print("shape".ljust(18) + "tasks match " + " ".join(classes))
    for shape in sorted(per_shape):
        c = per_shape[shape]
        print(shape.ljust(18) + f"{c['tasks']:5} {c['match']:5} "
              + " ".join(f"{c[k]:{len(k)}}" for k in classes))
    total = sum(c["tasks"] for c in per_shape.values())
    matched = sum(c["match"] for c in per_shape.values())
    print(f"total: {matched}/{total} match; task seconds mean "
          f"{sum(seconds) / max(total, 1):.1f}" +
          (f"; wall {args.wall:.0f} s = {args.wall / max(total, 1):.1f} s per task"
           if args.wall else ""))
    for finding in findings:
        print(f"{finding['task_id']} {finding['shape']}: {finding['class']} "
              f"({finding['status']}) {finding['detail'][:200]} {finding['diff'][:400]}")
    with open(os.path.join(args.output, "differential.json"), "w") as f:
        json.dump({"per_shape": per_shape, "findings": findings, "total": total,
                   "match": matched, "wall_s": args.wall}, f, indent=1, ensure_ascii=False)
    bad = [x for x in findings if not x["class"].startswith("flink:")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
