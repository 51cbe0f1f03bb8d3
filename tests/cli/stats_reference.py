"""stats_reference.py: holds common/results/stats.h (through the probe
tests/cli/stats_probe.c) to computations that share none of its code:
  - the generator and its bounded draw against this file's own xoshiro256**,
    splitmix64 and Lemire draw, output for output;
  - the resampled means of small cases against the same draws made here, bit
    for bit, and every interval against numpy.percentile of the means;
  - the bootstrap of 402-task methods (and their paired differences) against
    a numpy bootstrap with numpy's own generator: each bound within 0.01;
  - McNemar's p-value against scipy.stats.binomtest (two-sided), to 1e-9
    relative, for every split of up to 40 discordant tasks and large ones up
    to 100,000;
  - pass@k against exact enumeration of the k-subsets of n <= 12 samples;
  - maj@n's vote against a count of every sample's votes.
Prints each group's count of cases; exits 1 on the first group that failed.
usage: stats_reference.py PROBE [--seed S]
"""
import argparse
import itertools
import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
from scipy.stats import binomtest

MASK = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro:
    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed, out = splitmix64(seed)
            self.s.append(out)

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, bound):
        """Lemire: floor(x * bound / 2^32) of a 32-bit x, the x whose low
        product is under 2^32 mod bound redrawn."""
        threshold = (1 << 32) % bound
        while True:
            product = (self.next() >> 32) * bound
            if product & 0xFFFFFFFF >= threshold:
                return product >> 32


def ask(probe, requests):
    text = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([probe], input=text, capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(requests), (len(answers), len(requests))
    return answers


class Checks:
    def __init__(self):
        self.failed = 0

    def expect(self, ok, what):
        if not ok:
            self.failed += 1
            if self.failed <= 20:
                print("FAIL:", what)

    def report(self, group, count):
        print(f"{group}: {count} cases" + (f", {self.failed} failed" if self.failed else ""))
        if self.failed:
            sys.exit(1)


def check_generator(probe):
    checks = Checks()
    seeds = [0, 1, 42, 2**63 - 1]
    bounds = [1, 2, 3, 10, 402, 3 << 30, 2**32 - 1]
    requests = [{"op": "rng", "seed": s, "count": 50} for s in seeds]
    requests += [{"op": "below", "seed": s, "bound": b, "count": 2000} for s in seeds for b in bounds]
    answers = ask(probe, requests)
    for request, reply in zip(requests, answers):
        rng = Xoshiro(request["seed"])
        if request["op"] == "rng":
            want = [f"{rng.next():016x}" for _ in range(request["count"])]
        else:
            want = [rng.below(request["bound"]) for _ in range(request["count"])]
        checks.expect(reply["out"] == want, f"{request['op']} seed {request['seed']} "
                      f"bound {request.get('bound')}")
    checks.report("generator and bounded draws", len(requests))


def numpy_interval(means):
    low, high = np.percentile(np.asarray(means, dtype=float), [2.5, 97.5])
    return float(low), float(high)


def check_exact_bootstrap(probe, gen):
    """Small cases whose draws this file repeats: the means bit for bit, the
    interval as numpy.percentile of them."""
    checks = Checks()
    cases = []
    for tasks, resamples in [(1, 7), (2, 40), (30, 200), (57, 301), (402, 64)]:
        for kind in ("binary", "fraction"):
            if kind == "binary":
                values = gen.integers(0, 2, tasks).astype(float)
            else:
                values = gen.integers(0, 6, tasks) / 5.0
            cases.append((values.tolist(), resamples, int(gen.integers(0, 2**62))))
    requests = [{"op": "means", "values": v, "resamples": b, "seed": s} for v, b, s in cases]
    requests += [{"op": "bootstrap", "values": v, "resamples": b, "seed": s} for v, b, s in cases]
    answers = ask(probe, requests)
    for i, (values, resamples, seed) in enumerate(cases):
        rng = Xoshiro(seed)
        means = []
        for _ in range(resamples):
            total = 0.0
            for _ in range(len(values)):
                total += values[rng.below(len(values))]
            means.append(total / len(values))
        got = answers[i]
        checks.expect(got["rc"] == 1 and got["means"] == means,
                      f"means of case {i} ({len(values)} tasks, B={resamples})")
        low, high = numpy_interval(means)
        got = answers[len(cases) + i]
        checks.expect(got["rc"] == 1 and (got["low"], got["high"]) == (low, high),
                      f"interval of case {i}: {got} against numpy {low}, {high}")
    # Intervals of arbitrary draws: ties, one draw, negative differences, and
    # 40 draws (the lower bound 97.5 % of the way between the first two, where
    # numpy interpolates from the upper one: some differ in the last bit).
    draw_sets = [[0.5], [1.0, 0.0], [0.25] * 9, gen.normal(size=10001).tolist(),
                 (gen.integers(-3, 4, 997) / 7).tolist()]
    draw_sets += [gen.random(40).tolist() for _ in range(200)]
    answers = ask(probe, [{"op": "interval", "draws": d} for d in draw_sets])
    for draws, got in zip(draw_sets, answers):
        low, high = numpy_interval(draws)
        checks.expect((got["low"], got["high"]) == (low, high),
                      f"interval of {len(draws)} draws: {got} against numpy {low}, {high}")
    checks.report("bootstrap means and percentiles, exact", 2 * len(cases) + len(draw_sets))


def numpy_bootstrap(columns, resamples, seed):
    """numpy's own bootstrap: B resamples of the task indices, shared by the
    columns; the interval of the first column minus the second when two."""
    rng = np.random.default_rng(seed)
    tasks = len(columns[0])
    index = rng.integers(0, tasks, size=(resamples, tasks))
    means = np.asarray(columns[0])[index].mean(axis=1)
    if len(columns) == 2:
        means -= np.asarray(columns[1])[index].mean(axis=1)
    return numpy_interval(means)


def check_bootstrap(probe, gen):
    checks = Checks()
    resamples = 10000
    cases = []
    for p in (0.05, 0.3, 0.5, 0.8):
        cases.append([(gen.random(402) < p).astype(float).tolist()])
    cases.append([(gen.binomial(5, 0.6, 402) / 5).tolist()])
    cases.append([(gen.binomial(4, 0.3, 250) / 4).tolist()])
    for p_a, p_b, flip in ((0.6, 0.55, 0.1), (0.4, 0.4, 0.3), (0.7, 0.5, 0.2)):
        a = gen.random(402) < p_a
        b = np.where(gen.random(402) < flip, gen.random(402) < p_b, a)
        cases.append([a.astype(float).tolist(), b.astype(float).tolist()])
    requests = []
    for i, columns in enumerate(cases):
        if len(columns) == 1:
            requests.append({"op": "bootstrap", "values": columns[0],
                             "resamples": resamples, "seed": 1000 + i})
        else:
            requests.append({"op": "paired", "a": columns[0], "b": columns[1],
                             "resamples": resamples, "seed": 1000 + i})
    answers = ask(probe, requests)
    worst = 0.0
    for i, (columns, got) in enumerate(zip(cases, answers)):
        low, high = numpy_bootstrap(columns, resamples, 2000 + i)
        gap = max(abs(got["low"] - low), abs(got["high"] - high))
        worst = max(worst, gap)
        checks.expect(got["rc"] == 1 and gap <= 0.01,
                      f"case {i}: streamex [{got.get('low')}, {got.get('high')}] "
                      f"numpy [{low}, {high}]")
    print(f"largest bound gap to numpy's bootstrap: {worst:.4f}")
    # No figure, and bounds.
    edge = [({"op": "bootstrap", "values": [], "resamples": 100, "seed": 1}, {"rc": 0}),
            ({"op": "bootstrap", "values": [1.0], "resamples": 0, "seed": 1}, {"rc": 0}),
            ({"op": "bootstrap", "values": [1.0], "resamples": 1000001, "seed": 1},
             {"rc": -1, "error": "bootstrap: 1000001 resamples, more than the bound 1000000"}),
            ({"op": "paired", "a": [1.0, 0.0], "b": [0.0, 0.0], "resamples": 1, "seed": 3},
             None)]
    answers = ask(probe, [request for request, _ in edge])
    for (request, want), got in zip(edge, answers):
        if want is None:  # one resample: both bounds are its mean
            checks.expect(got["rc"] == 1 and got["low"] == got["high"] in (0.0, 0.5, 1.0),
                          f"{request}: {got}")
        else:
            checks.expect(got == want, f"{request}: {got} against {want}")
    checks.report("bootstrap against numpy's, within 0.01", len(cases) + len(edge))


def check_mcnemar(probe, gen):
    checks = Checks()
    pairs = [(a, n - a) for n in range(0, 41) for a in range(n + 1)]
    for n in (1000, 10000, 100000):
        for _ in range(40):
            a = int(gen.binomial(n, float(gen.uniform(0.44, 0.5))))
            pairs.append((a, n - a))
    pairs += [(49800, 50200), (49000, 51000), (45000, 55000), (40000, 60000),
              (0, 100000), (3, 99997), (50000, 50000), (49999, 50001), (1, 1074), (1, 1080)]
    pairs += [(b, a) for a, b in pairs[-20:]]
    answers = ask(probe, [{"op": "mcnemar", "only_a": a, "only_b": b} for a, b in pairs])
    worst = 0.0
    for (a, b), got in zip(pairs, answers):
        want = 1.0 if a + b == 0 else binomtest(a, a + b, 0.5).pvalue
        p = got["p"]
        if want < 1e-300:  # scipy's tail underflows there too
            ok = p < 1e-300
        else:
            error = abs(p - want) / want
            worst = max(worst, error)
            ok = error <= 1e-9
        checks.expect(ok, f"mcnemar({a}, {b}) = {p}, scipy {want}")
    print(f"largest relative error to scipy's binomtest: {worst:.3g}")
    checks.report("McNemar against scipy.stats.binomtest", len(pairs))


def pass_at_k_enumerated(samples, correct, k):
    """The share of the k-subsets of the samples that hold a correct one."""
    right = subsets = 0
    for chosen in itertools.combinations(range(samples), k):
        subsets += 1
        right += any(i < correct for i in chosen)
    return Fraction(right, subsets)


def check_pass_at_k(probe, gen):
    checks = Checks()
    cases = [(n, c, k) for n in range(1, 13) for c in range(n + 1) for k in range(1, n + 1)]
    requests = [{"op": "pass_at_k", "samples": n, "correct": c, "k": k} for n, c, k in cases]
    bad = [(5, 6, 1), (5, 1, 0), (5, 1, 6), (0, 0, 1)]
    requests += [{"op": "pass_at_k", "samples": n, "correct": c, "k": k} for n, c, k in bad]
    answers = ask(probe, requests)
    exact = {}
    for (n, c, k), got in zip(cases, answers):
        want = exact[n, c, k] = pass_at_k_enumerated(n, c, k)
        value = got["value"]
        if want in (0, 1):
            checks.expect(value == float(want), f"pass@{k} n={n} c={c}: {value}, exactly {want}")
        else:
            checks.expect(abs(Fraction(value) - want) <= Fraction(1, 10**12),
                          f"pass@{k} n={n} c={c}: {value}, enumerated {float(want)}")
    for (n, c, k), got in zip(bad, answers[len(cases):]):
        checks.expect(got["value"] is None, f"pass@{k} n={n} c={c}: {got} for no value")
    means = []
    for _ in range(200):
        n = int(gen.integers(1, 13))
        k = int(gen.integers(1, n + 1))
        correct = gen.integers(0, n + 1, int(gen.integers(1, 50))).tolist()
        means.append((n, k, correct))
    requests = [{"op": "pass_at_k_mean", "correct": c, "samples": n, "k": k} for n, k, c in means]
    requests += [{"op": "pass_at_k_mean", "correct": [], "samples": 3, "k": 1},
                 {"op": "pass_at_k_mean", "correct": [1, 4], "samples": 3, "k": 1}]
    answers = ask(probe, requests)
    for (n, k, correct), got in zip(means, answers):
        want = sum(exact[n, c, k] for c in correct) / len(correct)
        checks.expect(got["rc"] == 1 and abs(Fraction(got["mean"]) - want) <= Fraction(1, 10**12),
                      f"mean pass@{k} n={n} {correct}: {got}, enumerated {float(want)}")
    checks.expect(answers[-2] == {"rc": 0}, f"no task: {answers[-2]}")
    checks.expect(answers[-1] == {"rc": -1, "error": "pass@1: task 1 has 4 correct of 3 samples"},
                  f"too many correct: {answers[-1]}")
    checks.report("pass@k against enumeration", len(cases) + len(bad) + len(means) + 2)


def check_majority(probe, gen):
    checks = Checks()
    cases = [[], [-1], [-1, -1, -1]]
    for _ in range(3000):
        samples = int(gen.integers(1, 13))
        cases.append(gen.integers(-1, int(gen.integers(1, 6)), samples).tolist())
    cases.append(gen.integers(-1, 40, 5000).tolist())
    answers = ask(probe, [{"op": "majority", "relation": r} for r in cases])
    for relation, got in zip(cases, answers):
        votes = {}
        for r in relation:
            if r >= 0:
                votes[r] = votes.get(r, 0) + 1
        # The sample with the most votes for its relation, the lowest first.
        voters = [(-votes[r], i) for i, r in enumerate(relation) if r >= 0]
        want = min(voters)[1] if voters else -1
        checks.expect(got["winner"] == want, f"majority of {relation}: {got}, counted {want}")
    checks.report("maj@n vote against a count", len(cases))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("probe")
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    gen = np.random.default_rng(args.seed)
    check_generator(args.probe)
    check_exact_bootstrap(args.probe, gen)
    check_bootstrap(args.probe, gen)
    check_mcnemar(args.probe, gen)
    check_pass_at_k(args.probe, gen)
    check_majority(args.probe, gen)


if __name__ == "__main__":
    main()
