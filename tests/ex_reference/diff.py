#!/usr/bin/env python3
"""diff.py: compares the EX verdicts of streamex and of the pandas reference.

Reads two results.jsonl files of the same corpus (gen_cases.py output) and
compares them task by task: the score, and the status (match, mismatch,
eval_error, missing_prediction). Every disagreement is printed with the
case's files (gold CSV, predicted CSV, evaluation JSON) and what pandas made
of them (dtypes and transposed column vectors), so a reader sees why pandas
decided as it did. With --streamex, the first disagreements are minimized
first: data lines of gold and prediction are dropped one at a time while
the two scorers still disagree.

    diff.py --bench CORPUS --profile P --reference REF/m/results.jsonl
            --streamex-results SX/m/results.jsonl [--streamex BIN]
            [--report REPORT.md] [--min-share 0.2]

--min-share checks that the corpus is worth something: at least that share
of the reference's verdicts must be match and as much mismatch. Exit status
0 only when there is no disagreement and the corpus passes that check.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402  (the same scorer, for minimizing)

MINIMIZE_LIMIT = 10
SHOW_LIMIT = 40


def load_results(path):
    with open(path, encoding="utf-8") as f:
        results = [json.loads(line) for line in f if line.strip()]
    return {r["task_id"]: r for r in results}


def verdict(result):
    return (result["score"], result["status"]) if result else None


def case_files(bench, task_id):
    """Paths of a case's gold CSV and evaluation JSON."""
    return (os.path.join(bench, "gold", task_id + ".csv"),
            os.path.join(bench, "evaluation", task_id + ".json"))


def read_text(path):
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")
    except OSError as e:
        return f"<unreadable: {e}>"


def pandas_view(path, nan_as_zero):
    """How pandas reads a CSV: dtypes and the vectors the comparison sees."""
    if path is None:
        return "(no file)"
    try:
        frame = pd.read_csv(path)
    except Exception as e:
        return f"read_csv raises {type(e).__name__}: {e}"
    vectors = frame.transpose().values.tolist()
    if nan_as_zero:
        vectors = [[0 if pd.isna(v) else v for v in vec] for vec in vectors]
    return f"dtypes {[str(t) for t in frame.dtypes]}\n    vectors {vectors!r}"


def score_with_streamex(streamex, bench, profile, task_id):
    """Runs `streamex score` on a one-task corpus holding just this case."""
    out = tempfile.mkdtemp(prefix="sx-min-out-")
    try:
        sub = os.path.join(bench, "submission.jsonl")
        cmd = [streamex, "score", "--bench", bench, "--method", "m=" + sub, "--output", out,
               "--profile", profile]
        subprocess.run(cmd, capture_output=True, timeout=60)
        results = load_results(os.path.join(out, "m", "results.jsonl"))
        return verdict(results.get(task_id))
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(out, ignore_errors=True)


def one_case_bench(bench, task_id, pred_csv):
    """A copy of one case as its own corpus (pred at pred/ID.csv)."""
    tmp = tempfile.mkdtemp(prefix="sx-min-")
    for sub in ("gold", "evaluation", "pred"):
        os.makedirs(os.path.join(tmp, sub))
    shutil.copy(os.path.join(bench, "gold", task_id + ".csv"), os.path.join(tmp, "gold"))
    shutil.copy(os.path.join(bench, "evaluation", task_id + ".json"), os.path.join(tmp, "evaluation"))
    if os.path.exists(pred_csv):
        shutil.copy(pred_csv, os.path.join(tmp, "pred", task_id + ".csv"))
    with open(os.path.join(tmp, "task_ids.txt"), "w") as f:
        f.write(task_id + "\n")
    with open(os.path.join(tmp, "submission.jsonl"), "w") as f:
        f.write(json.dumps({"task_id": task_id, "csv": "pred/%s.csv" % task_id}) + "\n")
    return tmp


def still_disagrees(streamex, tmp, profile, task_id):
    ref = reference.score_task(tmp, task_id, os.path.join(tmp, "pred", task_id + ".csv"),
                               profile == "spider2-lite-2025-11")[0]
    ours = score_with_streamex(streamex, tmp, profile, task_id)
    return ours is not None and ours[1] != ref


def read_lines_of(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read().splitlines(keepends=True)


def write_lines_of(path, lines):
    if lines is not None:
        with open(path, "wb") as f:
            f.writelines(lines)


def minimize(streamex, bench, profile, task_id, pred_csv):
    """Drops data lines (never a header) while the disagreement persists:
    line i of both files together first (rows usually correspond), then of
    gold alone, then of the prediction alone. Returns the smaller case's
    folder."""
    tmp = one_case_bench(bench, task_id, pred_csv)
    if not still_disagrees(streamex, tmp, profile, task_id):
        return tmp
    paths = [os.path.join(tmp, "gold", task_id + ".csv"), os.path.join(tmp, "pred", task_id + ".csv")]
    files = [read_lines_of(p) for p in paths]
    for which in ((0, 1), (0,), (1,)):
        i = 1
        while any(files[w] is not None and i < len(files[w]) for w in which):
            trial = list(files)
            for w in which:
                if trial[w] is not None and i < len(trial[w]):
                    trial[w] = trial[w][:i] + trial[w][i + 1:]
            for path, lines in zip(paths, trial):
                write_lines_of(path, lines)
            if still_disagrees(streamex, tmp, profile, task_id):
                files = trial
            else:
                i += 1
    for path, lines in zip(paths, files):
        write_lines_of(path, lines)
    return tmp


def describe(bench, task_id, pred_csv, profile, ref, ours):
    nan_as_zero = profile == "spider2-lite-2025-11"
    gold, evaluation = case_files(bench, task_id)
    return "\n".join([
        f"### {task_id} ({profile})",
        f"- reference (pandas): {verdict(ref)} {ref['detail'] if ref else ''}",
        f"- streamex:           {verdict(ours)} {ours.get('detail', '') if ours else ''}",
        f"- evaluation: `{read_text(evaluation)}`",
        f"- gold CSV (repr): `{read_text(gold)!r}`",
        f"  pandas: {pandas_view(gold, nan_as_zero)}",
        f"- predicted CSV (repr): `{read_text(pred_csv)!r}`",
        f"  pandas: {pandas_view(pred_csv, nan_as_zero)}",
        "",
    ])


def corpus_check(ref_results, min_share):
    total = len(ref_results)
    match = sum(r["status"] == "match" for r in ref_results.values())
    mismatch = sum(r["status"] == "mismatch" for r in ref_results.values())
    ok = total > 0 and match >= min_share * total and mismatch >= min_share * total
    return ok, f"corpus: {total} cases, {match} match, {mismatch} mismatch (each must be >= {min_share:.0%})"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True)
    parser.add_argument("--profile", required=True, choices=reference.PROFILES)
    parser.add_argument("--reference", required=True, help="the reference's results.jsonl")
    parser.add_argument("--streamex-results", required=True, help="streamex's results.jsonl")
    parser.add_argument("--streamex", help="streamex binary, to minimize disagreements")
    parser.add_argument("--report", help="append the disagreements (markdown) to this file")
    parser.add_argument("--min-share", type=float, default=0.2)
    args = parser.parse_args(argv)

    task_ids = reference.read_lines(os.path.join(args.bench, "task_ids.txt"))
    submission = reference.read_submission(os.path.join(args.bench, "submission.jsonl"))
    ref_results = load_results(args.reference)
    sx_results = load_results(args.streamex_results)
    differing = [t for t in task_ids if verdict(ref_results.get(t)) != verdict(sx_results.get(t))]

    sections = []
    for n, task_id in enumerate(differing[:SHOW_LIMIT]):
        pred_csv = submission.get(task_id)
        if args.streamex and n < MINIMIZE_LIMIT and pred_csv:
            small = minimize(args.streamex, args.bench, args.profile, task_id, pred_csv)
            small_pred = os.path.join(small, "pred", task_id + ".csv")
            ref = {"score": 0, "status": "?", "detail": ""}
            ref["status"], ref["detail"] = reference.score_task(
                small, task_id, small_pred, args.profile == "spider2-lite-2025-11")
            ref["score"] = int(ref["status"] == "match")
            ours = score_with_streamex(args.streamex, small, args.profile, task_id)
            ours = {"score": ours[0], "status": ours[1]} if ours else None
            sections.append("(minimized)\n" + describe(small, task_id, small_pred, args.profile, ref, ours))
            shutil.rmtree(small, ignore_errors=True)
        else:
            sections.append(describe(args.bench, task_id, pred_csv, args.profile,
                                     ref_results.get(task_id), sx_results.get(task_id)))

    ok_corpus, corpus_line = corpus_check({t: ref_results[t] for t in task_ids if t in ref_results},
                                          args.min_share)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    summary = (f"{stamp} profile {args.profile}: {len(task_ids)} cases, "
               f"{len(differing)} disagreements; {corpus_line}")
    print(summary)
    for section in sections:
        print(section)
    if args.report:
        with open(args.report, "a", encoding="utf-8") as f:
            f.write(f"## {summary}\n\n" + "\n".join(sections) + "\n")
    return 0 if not differing and ok_corpus else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
