"""figures.py: tests/cli/figures.sh's bench and its independent reckoning.

  make WORK          a 400-task bench in WORK/bench and two methods' final
                     CSVs and submissions (WORK/A.jsonl, WORK/B.jsonl), each
                     task of a kind (KINDS: what A and B answer), the kinds in
                     WORK/bench.json
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
  samples WORK       a bench of 420 tasks in WORK/sbench (SAMPLE_KINDS, 30
                     tasks each) and two submissions: S.jsonl, 3 samples per
                     task, and O.jsonl, one
  samples-check WORK SUMMARY COMPARE_JSON
                     checks summary.json of S and O by brute force: S's mean
                     EX, pass@1..3 (enumerating the k-subsets of each task's
                     samples), maj@3 (each task's relations grouped, votes
                     counted, ties to the lowest sample), its intervals
                     against numpy's bootstrap of the per-task shares, the
                     pair's counts (signs of the per-task differences),
                     ex_diff, McNemar p (scipy) and interval; and `compare
                     --json` of S and O: the same figures, and the samples
                     0 that differ

The verdicts follow from the CSVs by the rules of docs/ex.md (gold rows
(1,x) (2,y) (3,z)): right rows match; rows with a wrong value are a
mismatch; every column right with the rows scrambled is EX 1 but strict 0;
the right rows in another order are EX 1 and strict 1 where order is ignored.
"""
import itertools
import json
import os
import random
import sys
from fractions import Fraction

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


def make_bench(work, name, prefix, kinds, seed, ignore_order):
    """WORK/NAME: a task per kind (shuffled with seed), IDs PREFIX and a
    number, each with GOLD and the ignore_order its kind says; returns the
    IDs and kinds in task order, also kept in WORK/NAME.json."""
    random.Random(seed).shuffle(kinds)
    ids = ["%s%03d" % (prefix, i + 1) for i in range(len(kinds))]
    bench = os.path.join(work, name)
    for sub in ("gold", "evaluation"):
        os.makedirs(os.path.join(bench, sub))
    with open(os.path.join(bench, "task_ids.txt"), "w") as f:
        f.write("".join(i + "\n" for i in ids))
    for i, kind in zip(ids, kinds):
        with open(os.path.join(bench, "gold", i + ".csv"), "w") as f:
            f.write(GOLD)
        with open(os.path.join(bench, "evaluation", i + ".json"), "w") as f:
            json.dump({"ignore_order": ignore_order(kind)}, f)
    with open(os.path.join(work, name + ".json"), "w") as f:
        json.dump(dict(zip(ids, kinds)), f)
    return ids, kinds


def make(work):
    kinds = [k for k, spec in KINDS.items() for _ in range(spec[2])]
    ids, kinds = make_bench(work, "bench", "t", kinds, 40, lambda kind: KINDS[kind][3])
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
    print(" ".join("%s=%d" % (k, v[2]) for k, v in KINDS.items()))


def verdicts(work):
    """task ID -> ((status, ex, strict) of A, of B), and the IDs in order."""
    kinds = json.load(open(os.path.join(work, "bench.json")))
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
    kinds = json.load(open(os.path.join(work, "bench.json")))
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


# Several samples per task: kind -> (S's three CSVs, O's CSV, ignore_order).
SAMPLE_KINDS = {
    "S01": (["right", "right", "right"], "right", True),
    "S02": (["wrong", "wrong", "right"], "right", True),
    "S03": (["right", "wrong", "wrong"], "wrong", True),
    "S04": (["wrong", "right", "other"], "wrong", True),
    "S05": (["right", "wrong", "other"], "right", True),
    "S06": ([None, "right", "wrong"], "wrong", True),
    "S07": ([None, None, None], None, True),
    "S08": (["permuted", "right", "wrong"], "right", True),
    "S09": (["permuted", "right", "wrong"], "wrong", False),
    "S10": (["wrong", "other", "other"], "wrong", True),
    "S11": (["right", None, "right"], "right", True),
    "S12": (["other", "wrong", "wrong"], "wrong", True),
    # the vote under the task's ignore_order: one relation of two votes
    # where order is ignored, three of one vote each where it counts
    "S13": (["wrong", "permuted", "right"], "right", True),
    "S14": (["right", "wrong", "wrong_permuted"], "wrong", False),
}


def verdict(csv, ignore_order):
    """(status, EX, strict) of a CSV kind under the task's ignore_order:
    the right rows in another order are a mismatch where order counts."""
    if csv == "permuted" and not ignore_order:
        return ("mismatch", 0, 0)
    return VERDICT[csv]


def same_relation(a, b, ignore_order):
    x, y = CSVS[a].splitlines(), CSVS[b].splitlines()
    if ignore_order:
        x, y = x[:1] + sorted(x[1:]), y[:1] + sorted(y[1:])
    return x == y


def majority_right(csvs, ignore_order):
    """maj@n of one task: the relations grouped by comparing every sample
    with a CSV to the others, the one most samples hold, ties to the one a
    lower sample holds; its lowest sample's EX verdict (0 with no CSV)."""
    groups = []  # [first sample, votes]
    for k, csv in enumerate(csvs):
        if csv is None:
            continue
        for g in groups:
            if same_relation(csvs[g[0]], csv, ignore_order):
                g[1] += 1
                break
        else:
            groups.append([k, 1])
    if not groups:
        return 0
    best = max(groups, key=lambda g: (g[1], -g[0]))
    return verdict(csvs[best[0]], ignore_order)[1]


def pass_at(rights, n, k):
    """The share of the k-subsets of n samples holding a right one."""
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(rights[i] for i in c) for c in subsets), len(subsets))


def make_samples(work):
    kinds = [k for k in SAMPLE_KINDS for _ in range(30)]
    ids, kinds = make_bench(work, "sbench", "s", kinds, 41, lambda kind: SAMPLE_KINDS[kind][2])
    folder = os.path.join(work, "scsv")
    os.makedirs(folder)
    with open(os.path.join(work, "S.jsonl"), "w") as s, \
            open(os.path.join(work, "O.jsonl"), "w") as o:
        for i, kind in zip(ids, kinds):
            csvs, other, _ = SAMPLE_KINDS[kind]
            for k, csv in enumerate(csvs + [other]):
                name = "S%d" % k if k < 3 else "O"
                if csv is None:
                    continue  # no line: missing_prediction
                path = os.path.join(folder, "%s.%s.csv" % (i, name))
                with open(path, "w") as f:
                    f.write(CSVS[csv])
                line = {"task_id": i, "csv": path}
                if k < 3:
                    line["sample"] = k
                (s if k < 3 else o).write(json.dumps(line) + "\n")


def check_samples(work, summary_path, compare_path):
    kinds = json.load(open(os.path.join(work, "sbench.json")))
    ids = sorted(kinds)
    s = json.load(open(summary_path))
    m, o = s["methods"]["S"], s["methods"]["O"]
    bad = []
    rights = {i: [verdict(c, SAMPLE_KINDS[kinds[i]][2])[1] if c else 0
                  for c in SAMPLE_KINDS[kinds[i]][0]] for i in ids}
    strict = {i: [verdict(c, SAMPLE_KINDS[kinds[i]][2])[2] if c else 0
                  for c in SAMPLE_KINDS[kinds[i]][0]] for i in ids}
    n, t = 3, len(ids)
    if (m["samples"], m["total"], m["correct"]) != (3, t, sum(map(sum, rights.values()))):
        bad.append("S: %r" % {k: m[k] for k in ("samples", "total", "correct")})
    want_pass = {str(k): sum(pass_at(rights[i], n, k) for i in ids) / t for k in (1, 2, 3)}
    for k, want in want_pass.items():
        if abs(m["pass_at_k"][k] - want) > 1e-12:
            bad.append("pass@%s %r, enumerated %r" % (k, m["pass_at_k"][k], float(want)))
    want_maj = Fraction(sum(majority_right(SAMPLE_KINDS[kinds[i]][0],
                                           SAMPLE_KINDS[kinds[i]][2]) for i in ids), t)
    if abs(m["maj_at_n"] - want_maj) > 1e-12:
        bad.append("maj@3 %r, counted %r" % (m["maj_at_n"], float(want_maj)))
    if "pass_at_k" in o or "maj_at_n" in o or "samples" in o:
        bad.append("O has one sample: %r" % o)
    values = {"ex": [sum(rights[i]) / n for i in ids],
              "strict": [sum(strict[i]) / n for i in ids]}
    other = {"ex": [verdict(SAMPLE_KINDS[kinds[i]][1], SAMPLE_KINDS[kinds[i]][2])[1]
                    if SAMPLE_KINDS[kinds[i]][1] else 0 for i in ids],
             "strict": [verdict(SAMPLE_KINDS[kinds[i]][1], SAMPLE_KINDS[kinds[i]][2])[2]
                        if SAMPLE_KINDS[kinds[i]][1] else 0 for i in ids]}
    worst = 0.0
    for which, ci_field, c in (("ex", "ex_ci", s["comparisons"][0]),
                               ("strict", "ex_strict_ci", s["comparisons"][1])):
        a, b = values[which], other[which]
        want = {"both": sum(1 for x, y in zip(a, b) if x == y and x > 0),
                "only_a": sum(1 for x, y in zip(a, b) if x > y),
                "only_b": sum(1 for x, y in zip(a, b) if y > x),
                "neither": sum(1 for x, y in zip(a, b) if x == y == 0)}
        for key, value in want.items():
            if c[key] != value:
                bad.append("%s %s %r, want %r" % (which, key, c[key], value))
        if abs(c["ex_diff"] - (sum(a) - sum(b)) / t) > 1e-12:
            bad.append("%s ex_diff %r" % (which, c["ex_diff"]))
        p = binomtest(want["only_a"], want["only_a"] + want["only_b"], 0.5).pvalue
        if abs(c["mcnemar_p"] - p) > 1e-9 * p:
            bad.append("%s mcnemar_p %r, scipy %r" % (which, c["mcnemar_p"], p))
        ref = numpy_intervals(a, b, 10000)
        for got, want_ci in ((m[ci_field], ref[0]), (o[ci_field], ref[1]),
                             (c["ex_diff_ci"], ref[2])):
            gap = max(abs(got[0] - want_ci[0]), abs(got[1] - want_ci[1]))
            worst = max(worst, gap)
            if gap > 0.01:
                bad.append("%s interval %r, numpy %r" % (which, got, list(want_ci)))
    cmp = json.load(open(compare_path))
    for got, want in zip(cmp["comparisons"], s["comparisons"]):
        if {k: v for k, v in got.items() if k not in ("a", "b")} != \
                {k: v for k, v in want.items() if k not in ("a", "b")}:
            bad.append("compare %r, summary %r" % (got, want))
    if (cmp["a"]["samples"], "samples" in cmp["b"]) != (3, False):
        bad.append("compare's sides %r %r" % (cmp["a"], cmp["b"]))
    want = {}
    for i in ids:
        csvs, other_csv, ignore = SAMPLE_KINDS[kinds[i]]
        a_csv = csvs[0]
        if a_csv is None or other_csv is None:
            relation_differs = a_csv != other_csv
        else:
            relation_differs = not same_relation(a_csv, other_csv, ignore)
        words = ["final relation"] if relation_differs else []
        va = verdict(a_csv, ignore) if a_csv else VERDICT[None]
        vb = verdict(other_csv, ignore) if other_csv else VERDICT[None]
        words = [w for w, d in (("verdict", va[1] != vb[1]), ("strict verdict", va[2] != vb[2]),
                                ("status", va[0] != vb[0])) if d] + words
        if words:
            want[i] = words
    got = {d["task_id"]: d["differs"] for d in cmp["differing"]}
    if got != want or any(d["sample"] != 0 for d in cmp["differing"]):
        bad.append("compare's tasks: %d listed, %d expected; first differences %r" % (
            len(got), len(want),
            [(i, got.get(i), want.get(i)) for i in sorted(set(got) | set(want))
             if got.get(i) != want.get(i)][:5]))
    if bad:
        print("\n".join(bad))
        return 1
    print("samples: pass@k, maj@3, counts and McNemar exact; intervals within %.4f of "
          "numpy's; compare lists %d samples 0" % (worst, len(want)))
    return 0


def main():
    cmd, work = sys.argv[1], sys.argv[2]
    if cmd == "make":
        make(work)
        return 0
    if cmd == "summary":
        return check_summary(work, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    if cmd == "samples":
        make_samples(work)
        return 0
    if cmd == "samples-check":
        return check_samples(work, sys.argv[3], sys.argv[4])
    return check_compare(work, *sys.argv[3:7])


if __name__ == "__main__":
    sys.exit(main())
