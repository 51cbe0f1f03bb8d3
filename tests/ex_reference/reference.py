#!/usr/bin/env python3
"""reference.py: the pandas reference for EX scoring (docs/ex.md).

Scores a benchmark folder the way `streamex score` does, but with real pandas
2.x doing the CSV reading and the transposition, and the Spider 2.0
`compare_pandas_table` algorithm (xlang-ai/Spider2, spider2-lite evaluation
suite; profile spider2-lite-2025-11 = commit 5fa8a517, spider2-lite-2025-03 =
commit cf37a33e) restated in our own words. The differential test and the
benchmark run it next to streamex on the same corpus; wherever the two
disagree, this file (that is, pandas) is the authority.

    reference.py --bench BENCH --method NAME=SUBMISSION.jsonl [--method ...]
                 --output OUT [--profile P] [--stats STATS.json]

Writes OUT/NAME/results.jsonl: {"task_id", "score", "status", "detail"} per
task in task_ids.txt order. --stats writes the cost of the scoring loop alone
(wall and CPU seconds; interpreter and pandas start-up excluded) and the
peak RSS of the process.
"""

import argparse
import itertools
import json
import math
import os
import resource
import sys
import time

import pandas as pd

PROFILES = ("spider2-lite-2025-11", "spider2-lite-2025-03")
TOLERANCE = 1e-2


class EvalError(Exception):
    """The task's own evaluation inputs (gold CSV, evaluation JSON) are broken."""


def sort_key(value):
    # Upstream orders a vector by (is None, Python str(), is a number) when
    # ignore_order is set; str() is what makes 1.0 sort as "1.0" and NaN as "nan".
    return (value is None, str(value), isinstance(value, (int, float)))


def values_equal(a, b):
    if pd.isna(a) and pd.isna(b):
        return True
    # bool is an int subclass, so booleans compare as the numbers 1 and 0.
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), abs_tol=TOLERANCE)
    return a == b


def max_matching(left, right, equal):
    """A maximum matching of left items with right items equal to them
    (Kuhn's algorithm): owner[j] is the left item paired with right item j,
    -1 for none. Left items are tried in order, and an item paired once
    stays paired, so the first ones are paired whenever a maximum matching
    can pair them."""
    edges = [[j for j in range(len(right)) if equal(left[i], right[j])] for i in range(len(left))]
    owner = [-1] * len(right)

    def augment(u, seen):
        for v in edges[u]:
            if v not in seen:
                seen.add(v)
                if owner[v] < 0 or augment(owner[v], seen):
                    owner[v] = u
                    return True
        return False

    for u in range(len(left)):
        augment(u, set())
    return owner


def vectors_equal(gold, pred, ignore_order, nan_as_zero):
    if nan_as_zero:
        # 2025-11: every missing value becomes the int 0 before anything else,
        # so it also sorts as "0" rather than "nan" or "0.0".
        gold = [0 if pd.isna(v) else v for v in gold]
        pred = [0 if pd.isna(v) else v for v in pred]
    if ignore_order:
        gold = sorted(gold, key=sort_key)
        pred = sorted(pred, key=sort_key)
    if len(gold) != len(pred):
        return False
    return all(values_equal(a, b) for a, b in zip(gold, pred))


def tables_equal(pred, gold, condition_cols, ignore_order, nan_as_zero):
    """1 when every gold column (or each condition column of gold) equals some
    prediction column; headers, column order and extra columns do not matter."""
    if condition_cols:
        gold = gold.iloc[:, condition_cols]
    gold_vectors = gold.transpose().values.tolist()
    pred_vectors = pred.transpose().values.tolist()
    for index, gold_vector in enumerate(gold_vectors):
        if not any(
            vectors_equal(gold_vector, pred_vector, ignore_order, nan_as_zero)
            for pred_vector in pred_vectors
        ):
            return False, f"gold column {index} has no equal predicted column"
    return True, ""


def candidate_golds(gold, policy):
    """The gold relations a prediction may match: the file itself for an
    ordinary task, each single row for any_one_argmax, and the mandatory rows
    plus every choice of k - mandatory tie rows for any_k_from_tie_set. Rows
    are taken after pandas inferred types over the whole file."""
    kind = policy["kind"]
    if kind == "ordinary":
        return [gold]
    if kind == "any_one_argmax":
        return (gold.iloc[[row]] for row in range(len(gold)))
    mandatory, k = policy["mandatory_rows"], policy["k"]
    return (
        gold.iloc[list(range(mandatory)) + list(chosen)]
        for chosen in itertools.combinations(range(mandatory, len(gold)), k - mandatory)
    )


def check_fits_gold(gold, condition_cols, policy):
    """The evaluation must make sense for this gold whatever the prediction,
    so a broken task is eval_error even when the prediction is unreadable:
    upstream, pandas would raise on it (IndexError) and score 0."""
    width, rows = gold.shape[1], len(gold)
    if any(c >= width for c in condition_cols):
        raise EvalError(f"condition_cols {condition_cols}: gold has {width} columns")
    if policy["kind"] == "any_one_argmax" and rows == 0:
        raise EvalError("any_one_argmax: gold has no rows")
    if policy["kind"] == "any_k_from_tie_set" and policy["k"] > rows:
        raise EvalError(f"any_k_from_tie_set: k={policy['k']} but gold has {rows} rows")


def read_policy(spec):
    policy = dict(spec.get("answer_policy", {"kind": "ordinary"}))
    kind = policy.get("kind")
    if kind not in ("ordinary", "any_one_argmax", "any_k_from_tie_set"):
        raise EvalError(f"unknown answer_policy kind {kind!r}")
    if kind == "any_k_from_tie_set":
        k, mandatory = policy.get("k"), policy.setdefault("mandatory_rows", 0)
        # k = 0 would ask for an empty answer: not a tie, a broken task.
        if not (isinstance(k, int) and isinstance(mandatory, int) and 0 <= mandatory <= k and k >= 1):
            raise EvalError(f"any_k_from_tie_set: need 1 <= k and 0 <= mandatory_rows <= k: {policy}")
    return policy


def read_evaluation(path):
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        raise EvalError(f"{path}: {e}") from e
    if not isinstance(spec, dict):
        raise EvalError(f"{path}: not a JSON object")
    condition_cols = spec.get("condition_cols") or []
    if isinstance(condition_cols, int):
        condition_cols = [condition_cols]  # upstream wraps a lone index in a list
    if not isinstance(condition_cols, list) or not all(isinstance(c, int) and c >= 0 for c in condition_cols):
        raise EvalError(f"{path}: condition_cols must be column indexes >= 0")
    return list(condition_cols), bool(spec.get("ignore_order", False)), read_policy(spec)


def score_task(bench, task_id, pred_csv, nan_as_zero):
    """(status, detail) of one task whose prediction is the file pred_csv."""
    gold_path = os.path.join(bench, "gold", task_id + ".csv")
    try:
        condition_cols, ignore_order, policy = read_evaluation(
            os.path.join(bench, "evaluation", task_id + ".json")
        )
        try:
            gold = pd.read_csv(gold_path)
        except Exception as e:  # any pandas failure means gold is unusable
            raise EvalError(f"{gold_path}: {e}") from e
        check_fits_gold(gold, condition_cols, policy)
        try:
            pred = pd.read_csv(pred_csv)
        except Exception as e:
            # The official evaluator scores an unreadable prediction 0.
            return "mismatch", f"{pred_csv}: {e}"
        detail = "no candidate gold"
        for candidate in candidate_golds(gold, policy):
            ok, detail = tables_equal(pred, candidate, condition_cols, ignore_order, nan_as_zero)
            if ok:
                return "match", ""
        return "mismatch", detail
    except EvalError as e:
        return "eval_error", str(e)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def read_submission(path):
    """task_id -> CSV path (absolute) or None, from {"task_id", "csv"} lines."""
    base = os.path.dirname(os.path.abspath(path))
    submission = {}
    for line in read_lines(path):
        entry = json.loads(line)
        csv = entry.get("csv")
        submission[entry["task_id"]] = None if csv is None else os.path.join(base, csv)
    return submission


def score_method(bench, task_ids, submission, nan_as_zero):
    results = []
    for task_id in task_ids:
        pred_csv = submission.get(task_id)
        if pred_csv is None:
            status, detail = "missing_prediction", "no prediction"
        else:
            status, detail = score_task(bench, task_id, pred_csv, nan_as_zero)
        results.append(
            {
                "task_id": task_id,
                "score": 1 if status == "match" else 0,
                "status": status,
                "detail": detail,
            }
        )
    return results


def write_results(out_dir, name, results):
    os.makedirs(os.path.join(out_dir, name), exist_ok=True)
    with open(os.path.join(out_dir, name, "results.jsonl"), "w", encoding="utf-8") as f:
        for result in results:
            f.write(json.dumps(result) + "\n")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--method", action="append", required=True, help="NAME=SUBMISSION.jsonl")
    parser.add_argument("--output", required=True)
    parser.add_argument("--profile", choices=PROFILES, default=PROFILES[0])
    parser.add_argument("--stats", help="write scoring-loop time and peak RSS here (JSON)")
    args = parser.parse_args(argv)
    methods = []
    for text in args.method:
        name, sep, path = text.partition("=")
        if not sep or not name or not path:
            parser.error(f"--method {text!r}: expected NAME=FILE")
        methods.append((name, path))
    args.method = methods
    return args


def main(argv):
    args = parse_args(argv)
    task_ids = read_lines(os.path.join(args.bench, "task_ids.txt"))
    nan_as_zero = args.profile == "spider2-lite-2025-11"
    submissions = [(name, read_submission(path)) for name, path in args.method]

    started, started_cpu = time.perf_counter(), time.process_time()
    scored = [(name, score_method(args.bench, task_ids, sub, nan_as_zero)) for name, sub in submissions]
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - started_cpu

    for name, results in scored:
        write_results(args.output, name, results)
        correct = sum(r["score"] for r in results)
        print(f"{name}: EX = {correct}/{len(results)}")
    if args.stats:
        cases = len(task_ids) * len(submissions)
        stats = {
            "cases": cases,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            # ru_maxrss is in KiB on Linux.
            "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        }
        with open(args.stats, "w", encoding="utf-8") as f:
            json.dump(stats, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
