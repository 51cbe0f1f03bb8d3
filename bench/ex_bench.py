#!/usr/bin/env python3
"""ex_bench.py: the EX scoring benchmark, streamex against the pandas reference.

Generates one large corpus of adversarial scoring cases
(tests/ex_reference/gen_cases.py, at least 20,000 by default, a different
seed from the test suite's), then for each profile scores it with
`streamex score` and with tests/ex_reference/reference.py, checks that the
two agree verdict for verdict (tests/ex_reference/diff.py), and prints, side
by side, cases per second, the speed ratio and the peak RSS of each.

Start-up is excluded on both sides, differently:
- the reference times its own scoring loop (after Python and pandas are
  loaded and the submission is read);
- streamex is timed from outside on the corpus and on a one-case corpus
  cut from it (best of three runs each); the one-case time (process start,
  reading the bench and the submission, writing outputs for one task) is
  subtracted.
Both CPU time (user + system) and wall time are measured; the ratio uses CPU
time, which a shared, busy machine disturbs far less than wall time.
Peak RSS is each process's ru_maxrss from wait4 (the reference's includes
the Python interpreter and pandas).

    bench/ex_bench.py --streamex build/streamex [--count 20000] [--seed 777]
                      [--work DIR] [--python PY]

Run it with the venv's python (scripts/setup-python.sh prints its path).
Exit status 1 when the two scorers disagree on any case.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REFDIR = os.path.join(HERE, "..", "tests", "ex_reference")
PROFILES = ("spider2-lite-2025-11", "spider2-lite-2025-03")
TARGET_RATIO = 50.0


def run_measured(cmd):
    """Runs cmd; returns ((wall, cpu) seconds, peak RSS KiB, exit status)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        sys.stderr.write(f"{' '.join(cmd)} exited {proc.returncode}:\n{stderr[-2000:]}\n")
    return (seconds, usage.ru_utime + usage.ru_stime), usage.ru_maxrss, proc.returncode


def one_case_corpus(corpus, dest):
    """The first case of corpus as a corpus of its own, for start-up cost."""
    with open(os.path.join(corpus, "task_ids.txt")) as f:
        task_id = f.readline().strip()
    for sub in ("gold", "evaluation", "pred"):
        os.makedirs(os.path.join(dest, sub), exist_ok=True)
    shutil.copy(os.path.join(corpus, "gold", task_id + ".csv"), os.path.join(dest, "gold"))
    shutil.copy(os.path.join(corpus, "evaluation", task_id + ".json"), os.path.join(dest, "evaluation"))
    pred = os.path.join(corpus, "pred", task_id + ".csv")
    if os.path.exists(pred):
        shutil.copy(pred, os.path.join(dest, "pred"))
    with open(os.path.join(dest, "task_ids.txt"), "w") as f:
        f.write(task_id + "\n")
    with open(os.path.join(dest, "submission.jsonl"), "w") as f:
        f.write(json.dumps({"task_id": task_id, "csv": "pred/%s.csv" % task_id}) + "\n")


def streamex_cmd(streamex, corpus, out, profile):
    return [streamex, "score", "--bench", corpus, "--method",
            "m=" + os.path.join(corpus, "submission.jsonl"), "--output", out, "--profile", profile]


def bench_profile(args, work, corpus, small, cases, profile):
    sx_out = os.path.join(work, "sx-" + profile)
    # Best of three runs each, on the corpus and on the one-case corpus: a
    # streamex run takes seconds, and the first one also pays for a cold
    # page cache.
    runs = [run_measured(streamex_cmd(args.streamex, corpus, sx_out, profile)) for _ in range(3)]
    if any(rc != 0 for _, _, rc in runs):
        return None
    sx_times = [min(times[i] for times, _, _ in runs) for i in (0, 1)]
    sx_rss = max(rss for _, rss, _ in runs)
    small_runs = [run_measured(streamex_cmd(args.streamex, small, os.path.join(work, "sx-small"),
                                            profile))[0] for _ in range(3)]
    startup = [min(run[i] for run in small_runs) for i in (0, 1)]
    ref_out = os.path.join(work, "ref-" + profile)
    stats_path = os.path.join(work, "ref-%s.json" % profile)
    ref_cmd = [args.python, os.path.join(REFDIR, "reference.py"), "--bench", corpus, "--method",
               "m=" + os.path.join(corpus, "submission.jsonl"), "--output", ref_out,
               "--profile", profile, "--stats", stats_path]
    _, ref_rss, rc = run_measured(ref_cmd)
    if rc != 0:
        return None
    with open(stats_path) as f:
        stats = json.load(f)
    diff_rc = subprocess.run([args.python, os.path.join(REFDIR, "diff.py"), "--bench", corpus,
                              "--profile", profile,
                              "--reference", os.path.join(ref_out, "m", "results.jsonl"),
                              "--streamex-results", os.path.join(sx_out, "m", "results.jsonl")]).returncode
    sx_wall, sx_cpu = (max(sx_times[i] - startup[i], 1e-9) for i in (0, 1))
    return {
        "profile": profile, "cases": cases, "sx_startup_ms": startup[0] * 1000,
        "sx_rate": cases / sx_cpu, "sx_wall_rate": cases / sx_wall, "sx_rss": sx_rss,
        "ref_rate": cases / stats["cpu_seconds"], "ref_wall_rate": cases / stats["seconds"],
        "ref_rss": ref_rss, "agree": diff_rc == 0,
    }


def print_table(rows):
    print()
    print(f"{'profile':22} {'cases':>6} {'streamex c/s':>13} {'reference c/s':>14} {'ratio':>7} "
          f"{'(wall c/s: sx / ref)':>21} {'sx peak RSS':>12} {'ref peak RSS':>13} {'agree':>6}")
    for r in rows:
        print(f"{r['profile']:22} {r['cases']:>6} {r['sx_rate']:>13.0f} {r['ref_rate']:>14.0f} "
              f"{r['sx_rate'] / r['ref_rate']:>6.1f}x {r['sx_wall_rate']:>11.0f} / {r['ref_wall_rate']:<7.0f}"
              f" {r['sx_rss'] / 1024:>9.1f} MiB {r['ref_rss'] / 1024:>9.1f} MiB "
              f"{'yes' if r['agree'] else 'NO':>6}")
    print("(cases per CPU second; streamex: corpus run minus the best of three one-case runs, "
          + ", ".join(f"{r['sx_startup_ms']:.1f} ms wall" for r in rows)
          + "; reference: its scoring loop, timed inside)")
    slowest = min(r["sx_rate"] / r["ref_rate"] for r in rows)
    print(f"target: streamex >= {TARGET_RATIO:.0f}x the reference: "
          + ("met" if slowest >= TARGET_RATIO else "NOT met") + f" (lowest ratio {slowest:.1f}x)")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streamex", required=True)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=777)
    parser.add_argument("--work", help="keep the corpus and outputs here (default: a temp dir, removed)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    args.streamex = os.path.abspath(args.streamex)

    work = args.work or tempfile.mkdtemp(prefix="sx-exbench-")
    try:
        corpus = os.path.join(work, "corpus")
        if not os.path.exists(os.path.join(corpus, "task_ids.txt")):
            subprocess.run([args.python, os.path.join(REFDIR, "gen_cases.py"), "--out", corpus,
                            "--count", str(args.count), "--seed", str(args.seed)], check=True)
        with open(os.path.join(corpus, "task_ids.txt")) as f:
            cases = sum(1 for line in f if line.strip())
        small = os.path.join(work, "small")
        one_case_corpus(corpus, small)
        rows = [bench_profile(args, work, corpus, small, cases, p) for p in PROFILES]
        if any(r is None for r in rows):
            return 1
        print_table(rows)
        return 0 if all(r["agree"] for r in rows) else 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
