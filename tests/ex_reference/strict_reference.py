#!/usr/bin/env python3
"""strict_reference.py: an independent reference for the strict EX verdict
(docs/ex.md, common/ex/strict.h), checked against streamex's results.jsonl.

Written from the definition, not from strict.c: for each gold the policy
allows (reference.candidate_golds), try every one-to-one choice of
prediction columns for the gold columns (itertools.permutations) and ask
whether the rows pair up: in place without ignore_order, else by a bipartite
matching (Kuhn) over rows equal cell by cell under reference.values_equal
(NaN equal, isclose abs_tol=1e-2; 2025-11 reads NaN as 0 first). Tasks too
big for brute force are counted as skipped, never guessed.

    strict_reference.py --bench B --results OUT/m/results.jsonl --profile P
Exit status 1 on any disagreement."""

import argparse
import itertools
import json
import math
import os
import sys

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (reading, policies and value equality)

MAX_ROWS = 200
MAX_CHOICES = 2000


class TooBig(Exception):
    pass


def rows_pair(gold_rows, pred_rows, ignore_order):
    def equal(a, b):
        return all(reference.values_equal(x, y) for x, y in zip(a, b))

    if not ignore_order:
        return all(equal(g, p) for g, p in zip(gold_rows, pred_rows))
    return all(o >= 0 for o in reference.max_matching(gold_rows, pred_rows, equal))


def vectors(frame, nan_as_zero):
    return [[0 if nan_as_zero and pd.isna(v) else v for v in column]
            for column in frame.transpose().values.tolist()]


def strict_verdict(bench, task_id, pred_csv, nan_as_zero):
    cond, ignore_order, policy = reference.read_evaluation(
        os.path.join(bench, "evaluation", task_id + ".json"))
    gold = pd.read_csv(os.path.join(bench, "gold", task_id + ".csv"))
    try:
        pred = pd.read_csv(pred_csv)
    except Exception:  # noqa: BLE001  unreadable: a mismatch, strict 0
        return 0
    pred_vectors = vectors(pred, nan_as_zero)
    for candidate in reference.candidate_golds(gold, policy):
        picked = candidate.iloc[:, cond] if cond else candidate
        gold_vectors = vectors(picked, nan_as_zero)
        if len(picked) != len(pred) or len(gold_vectors) > len(pred_vectors):
            continue
        if len(pred) > MAX_ROWS or math.perm(len(pred_vectors), len(gold_vectors)) > MAX_CHOICES:
            raise TooBig(task_id)
        gold_rows = list(zip(*gold_vectors))
        for choice in itertools.permutations(range(len(pred_vectors)), len(gold_vectors)):
            pred_rows = list(zip(*[pred_vectors[j] for j in choice]))
            if rows_pair(gold_rows, pred_rows, ignore_order):
                return 1
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--profile", required=True)
    args = parser.parse_args(argv)
    nan_as_zero = args.profile == "spider2-lite-2025-11"
    submission = {}
    with open(os.path.join(args.bench, "submission.jsonl")) as f:
        for line in f:
            if line.strip():
                entry = json.loads(line)
                submission[entry["task_id"]] = entry["csv"]
    checked = skipped = disagreements = 0
    with open(args.results) as f:
        for line in f:
            result = json.loads(line)
            csv = submission.get(result["task_id"])
            if result["status"] not in ("match", "mismatch") or not csv:
                if result["strict"] != 0:
                    print(f"{result['task_id']}: unscored ({result['status']}) but strict 1")
                    disagreements += 1
                continue
            csv = os.path.join(args.bench, csv)  # absolute paths stay as they are
            try:
                want = strict_verdict(args.bench, result["task_id"], csv, nan_as_zero)
            except TooBig:
                skipped += 1
                continue
            checked += 1
            if want != result["strict"]:
                disagreements += 1
                print(f"{result['task_id']}: streamex strict {result['strict']}, reference {want}"
                      f" ({result['detail']})")
    print(f"strict reference, {args.profile}: {checked} scored tasks checked, {skipped} too big "
          f"for brute force, {disagreements} disagreements")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
