#!/usr/bin/env python3
"""missdiff_reference.py: an independent reference for the row-level diff of
a miss (docs/outputs.md "OUT/NAME/diff/ID.json", common/ex/diff.h), checked
against the diff files `streamex score` wrote.

Written from the definition, not from diff.c. pandas reads both CSVs
(reference.py's reading, value equality and tie policies); the header's
names are read as written (header=None). For every task of results.jsonl:
  - a diff file exists exactly when the task was scored (match, mismatch)
    with a CSV and its verdict or strict verdict is 0;
  - columns: the strict check's assignment when there is one: over the
    policy's candidate golds in order, with the prediction's row count, the
    one-to-one choices of prediction columns in lexicographic order
    (itertools.permutations) under which every compared gold column equals
    its prediction column on its own (a multiset, by a maximum matching, with
    ignore_order; else in place): the first under which the rows pair, else
    the first of all. Otherwise each gold column takes the first unused
    prediction column of the same name, then the unused one sharing the most
    values (a maximum matching of the two columns' values), the leftmost of
    equals, or when none is unused the best of all ("shared");
  - missing and extra: a maximum matching (Kuhn) of gold rows (a tie task:
    the legal set, mandatory rows tried first) with prediction rows, equal
    cell by cell; the counts follow (a tie task: mandatory rows unpaired,
    plus tie rows still wanted), and the listed rows are checked to be real
    rows of each side, as many as the count allows (at most 20), and, when
    every one is listed, to leave two sides that pair completely;
  - without ignore_order the first position where the sequences differ;
    a tie task's rule; the policy as the evaluation says it.
Tasks too big for brute force are counted as skipped, never guessed.

    missdiff_reference.py --bench B --out OUT/m --profile P
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
SHOWN = 20


class TooBig(Exception):
    pass


def canon(v):
    """A value as read, for comparing a listed row with a real one: JSON null
    and NaN alike, numbers by value, the infinities as "inf"/"-inf" texts."""
    if v is None:
        return ("nan",)
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return ("bool", bool(v))
    if isinstance(v, (int, float)) or hasattr(v, "dtype"):
        f = float(v)
        if math.isnan(f):
            return ("nan",)
        if math.isinf(f):
            return ("inf", f > 0)
        return ("num", f)
    if v in ("inf", "-inf"):
        return ("inf", v == "inf")
    return ("str", v)


def read(path):
    """(frame, names as written) or (None, None) when pandas cannot read it."""
    try:
        frame = pd.read_csv(path)
    except Exception:  # noqa: BLE001  unreadable: no columns, no rows
        return None, None
    try:
        head = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False,
                           na_filter=False)
        names = [str(v) for v in head.iloc[0].tolist()][: frame.shape[1]]
    except Exception:  # noqa: BLE001
        names = None
    return frame, names


class Task:
    def __init__(self, bench, task_id, pred_csv, nan_as_zero):
        self.cond, self.ignore_order, self.policy = reference.read_evaluation(
            os.path.join(bench, "evaluation", task_id + ".json"))
        self.gold, self.gold_names = read(os.path.join(bench, "gold", task_id + ".csv"))
        self.pred, self.pred_names = read(pred_csv)
        self.nan_as_zero = nan_as_zero
        gold_cols = self.cond or list(range(self.gold.shape[1]))
        self.gold_cols = gold_cols
        self.gold_raw = [self.gold.iloc[:, c].tolist() for c in gold_cols]
        self.pred_raw = ([] if self.pred is None else
                         [self.pred.iloc[:, c].tolist() for c in range(self.pred.shape[1])])
        if len(self.gold) > MAX_ROWS or (self.pred is not None and len(self.pred) > MAX_ROWS):
            raise TooBig(task_id)

    def value(self, v):
        return 0 if self.nan_as_zero and pd.isna(v) else v

    def equal(self, a, b):
        return reference.values_equal(self.value(a), self.value(b))

    def rows_equal(self, g, p):
        return all(self.equal(a, b) for a, b in zip(g, p))

    def columns_equal(self, g, p):
        if len(g) != len(p):
            return False
        if not self.ignore_order:
            return all(self.equal(a, b) for a, b in zip(g, p))
        return all(o >= 0 for o in reference.max_matching(g, p, self.equal))

    def rows_pair(self, g_rows, p_rows):
        if not self.ignore_order:
            return all(self.rows_equal(g, p) for g, p in zip(g_rows, p_rows))
        return all(o >= 0 for o in reference.max_matching(g_rows, p_rows, self.rows_equal))

    def strict_assignment(self):
        first = None
        for candidate in reference.candidate_golds(self.gold, self.policy):
            picked = candidate.iloc[:, self.cond] if self.cond else candidate
            if len(picked) != len(self.pred):
                continue
            g = [picked.iloc[:, c].tolist() for c in range(picked.shape[1])]
            if len(g) > len(self.pred_raw):
                continue
            if math.perm(len(self.pred_raw), len(g)) > MAX_CHOICES:
                raise TooBig("columns")
            g_rows = list(zip(*g))
            for choice in itertools.permutations(range(len(self.pred_raw)), len(g)):
                if not all(self.columns_equal(g[i], self.pred_raw[p]) for i, p in enumerate(choice)):
                    continue
                if first is None:
                    first = choice
                p_rows = list(zip(*[self.pred_raw[p] for p in choice]))
                if self.rows_pair(g_rows, p_rows):
                    return list(choice)
        return list(first) if first is not None else None

    def shared(self, g, p):
        return sum(o >= 0 for o in reference.max_matching(g, p, self.equal))

    def columns(self):
        """[(prediction column or None, by)] per compared gold column."""
        if self.pred is None:
            return [(None, None)] * len(self.gold_cols)
        strict = self.strict_assignment()
        if strict is not None:
            return [(p, "strict") for p in strict]
        if self.gold_names is None or self.pred_names is None:
            raise TooBig("names")
        out = [None] * len(self.gold_cols)
        used = set()
        for i, c in enumerate(self.gold_cols):
            for p, name in enumerate(self.pred_names):
                if p not in used and name == self.gold_names[c]:
                    out[i] = (p, "name")
                    used.add(p)
                    break
        for i in range(len(self.gold_cols)):
            if out[i] is not None:
                continue
            free = [p for p in range(len(self.pred_raw)) if p not in used]
            pool = free or list(range(len(self.pred_raw)))
            best = max(pool, key=lambda p: (self.shared(self.gold_raw[i], self.pred_raw[p]), -p))
            out[i] = (best, "values" if free else "shared")
            used.add(best)
        return out


def check_rows_listed(listed, rows, count, what, problems):
    """listed: the file's rows (JSON); rows: the side's real rows; each listed
    row must be one of them, one for one."""
    if len(listed) != min(count, SHOWN):
        problems.append(f"{what}: {len(listed)} rows listed for a count of {count}")
    pool = [tuple(canon(v) for v in r) for r in rows]
    taken = []
    for r in listed:
        key = tuple(canon(v) for v in r)
        for i, have in enumerate(pool):
            if have == key and i not in taken:
                taken.append(i)
                break
        else:
            problems.append(f"{what}: listed row {r} is not one of its rows")
    return taken


def check_task(task, diff, problems):
    gold_rows = list(zip(*task.gold_raw)) if task.gold_raw else [()] * len(task.gold)
    policy = task.policy
    kind = policy["kind"]
    want_policy = {"kind": kind}
    if kind == "any_k_from_tie_set":
        want_policy.update(k=policy["k"], mandatory_rows=policy["mandatory_rows"])
    want_policy.update(ignore_order=task.ignore_order, condition_cols=task.cond, tolerance=0.01)
    if diff["policy"] != want_policy:
        problems.append(f"policy {diff['policy']}, expected {want_policy}")

    columns = task.columns()
    got_columns = [(c["prediction_index"], c["by"]) for c in diff["columns"]]
    if got_columns != columns:
        problems.append(f"columns {got_columns}, expected {columns}")
        return
    for c, g in zip(diff["columns"], task.gold_cols):
        if c["gold_index"] != g or (task.gold_names and c["gold"] != task.gold_names[g]):
            problems.append(f"gold column {c}, expected index {g}")
    if task.pred is None:
        pred_rows = []
        if not diff.get("note", "").startswith("the prediction cannot be read: "):
            problems.append("an unreadable prediction without its note")
    elif not task.gold_cols:
        pred_rows = [()] * len(task.pred)
    else:
        pred_rows = list(zip(*[task.pred_raw[p] for p, _ in columns]))
    if diff["gold_rows"] != len(gold_rows) or diff["prediction_rows"] != len(pred_rows):
        problems.append(f"rows {diff['gold_rows']}/{diff['prediction_rows']}, expected "
                        f"{len(gold_rows)}/{len(pred_rows)}")
    if not diff["exact"]:
        problems.append("not exact")

    tie = kind != "ordinary"
    k = 1 if kind == "any_one_argmax" else policy.get("k", 0)
    mandatory = policy.get("mandatory_rows", 0) if kind == "any_k_from_tie_set" else 0
    equal = task.rows_equal if pred_rows else (lambda a, b: False)
    owner = reference.max_matching(pred_rows, gold_rows, equal) if not tie else None
    if tie:
        # gold rows on the left, mandatory first: Kuhn keeps every row it has paired.
        owner_of_pred = reference.max_matching(gold_rows, pred_rows, lambda g, p: equal(p, g))
        gold_paired = set(o for o in owner_of_pred if o >= 0)
        paired = len(gold_paired)
        paired_mandatory = sum(1 for r in gold_paired if r < mandatory)
        lacking = mandatory - paired_mandatory
        from_tie = max(0, (k - mandatory) - (paired - paired_mandatory))
        want_missing = lacking + from_tie
        want_extra = len(pred_rows) - paired
        rule = ("too few rows" if len(pred_rows) < k else "too many rows" if len(pred_rows) > k
                else "a mandatory row missing" if lacking else
                "a row outside the tie set" if want_extra else None)
        if diff.get("rule") != rule:
            problems.append(f"rule {diff.get('rule')!r}, expected {rule!r}")
        if diff["missing"].get("from_tie_set") != from_tie:
            problems.append(f"from_tie_set {diff['missing'].get('from_tie_set')}, expected {from_tie}")
        listed_count = lacking
        missing_pool = gold_rows[:mandatory]
    else:
        pairs = sum(1 for o in owner if o >= 0)
        want_missing = len(gold_rows) - pairs
        want_extra = len(pred_rows) - pairs
        listed_count = want_missing
        missing_pool = gold_rows
    if diff["missing"]["count"] != want_missing or diff["extra"]["count"] != want_extra:
        problems.append(f"missing/extra {diff['missing']['count']}/{diff['extra']['count']}, "
                        f"expected {want_missing}/{want_extra}")
        return
    taken_gold = check_rows_listed(diff["missing"]["rows"], missing_pool, listed_count, "missing",
                                   problems)
    taken_pred = check_rows_listed(diff["extra"]["rows"], pred_rows, want_extra, "extra", problems)
    if listed_count <= SHOWN and want_extra <= SHOWN and not problems:
        rest_gold = [r for i, r in enumerate(gold_rows) if i not in taken_gold]
        rest_pred = [r for i, r in enumerate(pred_rows) if i not in taken_pred]
        rest_mandatory = mandatory - len(taken_gold) if tie else 0
        owner = reference.max_matching(rest_gold, rest_pred, equal)
        paired_gold = set(o for o in owner if o >= 0)
        # What is left pairs: every prediction row, and every gold row
        # (a tie task: every mandatory row) with one.
        whole = (all(o >= 0 for o in owner) and
                 (all(r in paired_gold for r in range(rest_mandatory)) if tie
                  else len(paired_gold) == len(rest_gold)))
        if not whole:
            problems.append("the rows left out of the lists do not pair")
    if not task.ignore_order and not tie:
        first = None
        for i in range(max(len(gold_rows), len(pred_rows))):
            if i < len(gold_rows) and i < len(pred_rows) and equal(gold_rows[i], pred_rows[i]):
                continue
            first = i
            break
        got = diff.get("first_difference", "absent")
        if first is None:
            if got is not None:
                problems.append(f"first_difference {got}, expected none")
        elif not isinstance(got, dict) or got.get("position") != first:
            problems.append(f"first_difference {got}, expected position {first}")
        else:
            for side, rows in (("gold", gold_rows), ("prediction", pred_rows)):
                want = [canon(v) for v in rows[first]] if first < len(rows) else None
                have = None if got[side] is None else [canon(v) for v in got[side]]
                if have != want:
                    problems.append(f"first_difference {side} {got[side]}")
    elif "first_difference" in diff:
        problems.append("first_difference with ignore_order or a tie policy")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--out", required=True, help="OUT/METHOD of streamex score")
    parser.add_argument("--profile", required=True)
    args = parser.parse_args(argv)
    nan_as_zero = args.profile == "spider2-lite-2025-11"
    checked = skipped = disagreements = 0
    counts = {"missing": 0, "extra": 0, "tie": 0, "strict": 0, "name": 0, "values": 0}
    with open(os.path.join(args.out, "results.jsonl"), encoding="utf-8") as f:
        results = [json.loads(line) for line in f if line.strip()]
    for result in results:
        task_id = result["task_id"]
        path = os.path.join(args.out, "diff", task_id + ".json")
        wanted = (result["status"] in ("match", "mismatch") and result["csv"] is not None
                  and (result["score"] == 0 or result["strict"] == 0))
        if wanted != os.path.exists(path):
            print(f"{task_id}: diff file {'missing' if wanted else 'not wanted'}")
            disagreements += 1
            continue
        if not wanted:
            continue
        with open(path, encoding="utf-8") as f:
            diff = json.load(f)
        problems = []
        if (diff["task_id"], diff["verdict"], diff["strict"], diff["profile"]) != (
                task_id, result["score"], result["strict"], args.profile):
            problems.append("task_id, verdict, strict or profile differ from results.jsonl")
        try:
            check_task(Task(args.bench, task_id, result["csv"], nan_as_zero), diff, problems)
        except TooBig:
            skipped += 1
            continue
        checked += 1
        counts["missing"] += diff["missing"]["count"] > 0
        counts["extra"] += diff["extra"]["count"] > 0
        counts["tie"] += "rule" in diff
        for c in diff["columns"]:
            if c["by"] in counts:
                counts[c["by"]] += 1
        if problems:
            disagreements += 1
            print(f"{task_id}: " + "; ".join(problems))
    print(f"diff reference, {args.profile}: {checked} diffs checked ({counts['missing']} with "
          f"missing rows, {counts['extra']} with extra rows, {counts['tie']} tie tasks; columns "
          f"by strict {counts['strict']}, name {counts['name']}, values {counts['values']}), "
          f"{skipped} too big for brute force, {disagreements} disagreements")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
