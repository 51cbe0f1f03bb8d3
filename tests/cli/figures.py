"""figures.py: tests/cli/figures.sh's bench and its independent reckoning.

  make WORK          a 400-task bench in WORK/bench and two methods' final
                     CSVs and submissions (WORK/A.jsonl, WORK/B.jsonl), each
                     task of a kind (KINDS: what A and B answer), the kinds in
                     WORK/kinds.json
  summary WORK SUMMARY B SEED
                     checks summary.json against the kinds: each method's
                     counts; the pair's four counts and ex_diff exactly,
                     mcnemar_p against scipy.stats.binomtest, every interval
                     against a numpy bootstrap of the same verdicts (own
                     generator, B resamples) within 0.01; run.bootstrap
  compare WORK COMPARE_JSON SUMMARY OUT_A OUT_B
                     checks `compare --json` of OUT_A (method A) and OUT_B
                     (method B): the same figures as summary.json's pair (the
                     same seed draws the same resamples), each side, and
                     exactly the tasks that differ with their reasons

The verdicts follow from the CSVs by the rules of docs/ex.md (gold rows
(1,x) (2,y) (3,z)): right rows match; rows with a wrong value are a
mismatch; every column right with the rows scrambled is EX 1 but strict 0;
the right rows in another order are EX 1 and strict 1 where order is ignored.
"""
import json
import os
import random
import sys

import numpy as np
from scipy.stats import binomtest

GOLD = "k,v\n1,x\n2,y\n3,z\n"
CSVS = {
    "right": GOLD,
    "wrong": "k,v\n1,x\n2,y\n3,w\n",
    "other": "k,v\n1,x\n2,y\n3,q\n",
    "scrambled": "k,v\n1,y\n2,z\n3,x\n",
    "permuted": "k,v\n3,z\n1,x\n2,y\n",
    "wrong_permuted": "k,v\n3,w\n1,x\n2,y\n",
}
# csv kind -> (status, EX verdict, strict verdict)
VERDICT = {
    "right": ("match", 1, 1),
    "wrong": ("mismatch", 0, 0),
    "other": ("mismatch", 0, 0),
    "scrambled": ("match", 1, 0),
    "permuted": ("match", 1, 1),
    "wrong_permuted": ("mismatch", 0, 0),
    None: ("missing_prediction", 0, 0),
}
# kind: (A's CSV, B's CSV, how many tasks, the task's ignore_order)
KINDS = {
    "RR": ("right", "right", 150, True),
    "RW": ("right", "wrong", 60, True),
    "WR": ("wrong", "right", 35, True),
    "WW": ("wrong", "wrong", 100, True),
    "MM": (None, None, 20, True),
    "RM": ("right", None, 10, True),
    "WM": ("wrong", None, 5, True),
    "SR": ("scrambled", "right", 8, True),
    "RS": ("right", "scrambled", 4, True),
    "PP": ("right", "permuted", 4, True),
    "QQ": ("wrong", "wrong_permuted", 2, False),
    "XX": ("wrong", "other", 2, True),
}


def make(work):
    kinds = [k for k, spec in KINDS.items() for _ in range(spec[2])]
    random.Random(40).shuffle(kinds)
    ids = ["t%03d" % (i + 1) for i in range(len(kinds))]
    bench = os.path.join(work, "bench")
    for sub in ("gold", "evaluation"):
        os.makedirs(os.path.join(bench, sub))
    with open(os.path.join(bench, "task_ids.txt"), "w") as f:
        f.write("".join(i + "\n" for i in ids))
    for i, kind in zip(ids, kinds):
        with open(os.path.join(bench, "gold", i + ".csv"), "w") as f:
            f.write(GOLD)
        with open(os.path.join(bench, "evaluation", i + ".json"), "w") as f:
            json.dump({"ignore_order": KINDS[kind][3]}, f)
    for side, method in ((0, "A"), (1, "B")):
        folder = os.path.join(work, method)
        os.makedirs(folder)
        with open(os.path.join(work, method + ".jsonl"), "w") as sub:
            for n, (i, kind) in enumerate(zip(ids, kinds)):
                csv = KINDS[kind][side]
                if csv is None:
                    # half the missing ones have no line, half a null CSV
                    if n % 2:
                        sub.write(json.dumps({"task_id": i, "csv": None}) + "\n")
                    continue
                path = os.path.join(folder, i + ".csv")
                with open(path, "w") as f:
                    f.write(CSVS[csv])
                sub.write(json.dumps({"task_id": i, "csv": path}) + "\n")
    with open(os.path.join(work, "kinds.json"), "w") as f:
        json.dump(dict(zip(ids, kinds)), f)
    print(" ".join("%s=%d" % (k, v[2]) for k, v in KINDS.items()))


def verdicts(work):
    """task ID -> ((status, ex, strict) of A, of B), and the IDs in order."""
    kinds = json.load(open(os.path.join(work, "kinds.json")))
    return {i: (VERDICT[KINDS[k][0]], VERDICT[KINDS[k][1]]) for i, k in kinds.items()}, \
        sorted(kinds)


def expected_pair(a, b):
    n = len(a)
    return {
        "both": sum(1 for x, y in zip(a, b) if x and y),
        "only_a": sum(1 for x, y in zip(a, b) if x and not y),
        "only_b": sum(1 for x, y in zip(a, b) if y and not x),
        "neither": sum(1 for x, y in zip(a, b) if not x and not y),
        "ex_diff": (sum(a) - sum(b)) / n,
    }


def numpy_intervals(a, b, resamples):
    """The 95 % percentile-bootstrap intervals of mean(a), mean(b) and
    mean(a - b), resampling task indices with numpy's own generator."""
    rng = np.random.default_rng(20240)
    a, b = np.array(a, float), np.array(b, float)
    idx = rng.integers(0, len(a), size=(resamples, len(a)))
    ma, mb = a[idx].mean(axis=1), b[idx].mean(axis=1)
    return [np.percentile(m, [2.5, 97.5]) for m in (ma, mb, ma - mb)]


def check_summary(work, path, resamples, seed):
    table, ids = verdicts(work)
    s = json.load(open(path))
    bad = []
    assert s["run"]["bootstrap"] == {"resamples": resamples, "seed": seed}, s["run"]
    cmp = s["comparisons"]
    assert len(cmp) == 2 and "strict" not in cmp[0] and cmp[1]["strict"] is True, cmp
    worst = 0.0
    for which, field, ci_field, c in ((1, "ex", "ex_ci", cmp[0]),
                                      (2, "ex_strict", "ex_strict_ci", cmp[1])):
        a = [table[i][0][which] for i in ids]
        b = [table[i][1][which] for i in ids]
        for name, v in (("A", a), ("B", b)):
            m = s["methods"][name]
            if m[field] != sum(v) / len(v):
                bad.append("%s %s %r, want %d/%d" % (name, field, m[field], sum(v), len(v)))
        want = expected_pair(a, b)
        assert (c["a"], c["b"]) == ("A", "B"), c
        for key, value in want.items():
            if c[key] != value:
                bad.append("%s %s: %r, want %r" % (field, key, c[key], value))
        p = binomtest(want["only_a"], want["only_a"] + want["only_b"], 0.5).pvalue
        if abs(c["mcnemar_p"] - p) > 1e-9 * p:
            bad.append("%s mcnemar_p %r, scipy %r" % (field, c["mcnemar_p"], p))
        ref = numpy_intervals(a, b, resamples)
        for got, want_ci in ((s["methods"]["A"][ci_field], ref[0]),
                             (s["methods"]["B"][ci_field], ref[1]),
                             (c["ex_diff_ci"], ref[2])):
            gap = max(abs(got[0] - want_ci[0]), abs(got[1] - want_ci[1]))
            worst = max(worst, gap)
            if gap > 0.01:
                bad.append("%s interval %r, numpy %r" % (field, got, list(want_ci)))
    if bad:
        print("\n".join(bad))
        return 1
    print("summary: counts, ex_diff and McNemar exact; intervals within %.4f of numpy's"
          % worst)
    return 0


def differs(a, b, ignore_order):
    """The reasons compare gives for a task, from the kinds alone."""
    (sa, ea, ta), (sb, eb, tb) = VERDICT[a], VERDICT[b]
    words = []
    if ea != eb:
        words.append("verdict")
    if ta != tb:
        words.append("strict verdict")
    if sa != sb:
        words.append("status")
    if a is None and b is None:
        same = True
    elif a is None or b is None:
        same = False
    else:
        rows = [CSVS[k].splitlines() for k in (a, b)]
        same = rows[0] == rows[1] or (ignore_order and sorted(rows[0]) == sorted(rows[1]))
    if not same:
        words.append("final relation")
    return words


def check_compare(work, path, summary_path, out_a, out_b):
    kinds = json.load(open(os.path.join(work, "kinds.json")))
    c = json.load(open(path))
    s = json.load(open(summary_path))
    bad = []
    for got, want, label in zip(c["comparisons"], s["comparisons"], ("EX", "strict")):
        if (got["a"], got["b"]) != (out_a + ":A", out_b + ":B"):
            bad.append("%s labels %r %r" % (label, got["a"], got["b"]))
        got = {k: v for k, v in got.items() if k not in ("a", "b")}
        want = {k: v for k, v in want.items() if k not in ("a", "b")}
        if got != want:
            bad.append("%s: compare %r, summary %r" % (label, got, want))
    for side, name in (("a", "A"), ("b", "B")):
        m = s["methods"][name]
        want = {"out": os.path.realpath(out_a if side == "a" else out_b), "method": name,
                "correct": m["correct"], "strict_correct": m["strict_correct"],
                "total": m["total"], "ex": m["ex"], "ex_strict": m["ex_strict"]}
        if c[side] != want:
            bad.append("side %s: %r, want %r" % (side, c[side], want))
    if c["bench"]["fingerprint"] != s["run"]["bench_fingerprint"] or c["bench"]["tasks"] != 400:
        bad.append("bench %r" % c["bench"])
    want = {}
    for i, k in sorted(kinds.items()):
        a, b, _, ignore = KINDS[k]
        words = differs(a, b, ignore)
        if words:
            want[i] = (words, VERDICT[a][0], VERDICT[b][0])
    got = {t["task_id"]: (t["differs"], t["a"]["status"], t["b"]["status"])
           for t in c["differing"]}
    if got != want:
        for i in sorted(set(got) | set(want)):
            if got.get(i) != want.get(i):
                bad.append("%s (%s): compare %r, want %r" % (i, kinds[i], got.get(i),
                                                             want.get(i)))
    if [t["task_id"] for t in c["differing"]] != sorted(got):
        bad.append("differing tasks not in task order")
    for t in c["differing"]:
        if t["relation"] != ("different" if "final relation" in t["differs"] else "same"):
            bad.append("%s relation %r" % (t["task_id"], t["relation"]))
    by_kind = {}
    for i in want:
        by_kind[kinds[i]] = by_kind.get(kinds[i], 0) + 1
    if bad:
        print("\n".join(bad[:30]))
        return 1
    print("compare: %d tasks differ (%s), as the kinds say" % (
        len(want), ", ".join("%s %d" % kv for kv in sorted(by_kind.items()))))
    return 0


def main():
    cmd, work = sys.argv[1], sys.argv[2]
    if cmd == "make":
        make(work)
        return 0
    if cmd == "summary":
        return check_summary(work, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    return check_compare(work, *sys.argv[3:7])


if __name__ == "__main__":
    sys.exit(main())
