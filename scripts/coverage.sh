#!/usr/bin/env bash
# coverage.sh [--report]: line and branch coverage of the unit and
# command-line suites (--report: only the report, from the counters the last
# run left in build-cov/).
# Builds a Debug build with gcc --coverage into build-cov/, runs
# ctest -L 'unit|cli' there (cli_fuzz and cli_build_types left out: they
# build their own trees, which add nothing to build-cov's counters), then
# prints lines and branches per source file (gcovr, Debian package gcovr,
# installed by scripts/setup-deps.sh), the verdict-deciding files of
# scripts/verdict-files.txt marked with '*' and repeated in a table of their
# own for their code above the module's self-test (a self-test's assertions
# are branches taken one way only), then each of their lines no test runs
# that tests/coverage-unreached.txt does not list with its reason (and any
# listed line a test runs now). The JSON report stays in
# build-cov/coverage.json. A failing test is
# reported but does not stop the report (its coverage is still counted); the
# script then exits 1. Not part of CI: a tool to run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v gcovr >/dev/null || { echo "coverage.sh: gcovr is not installed (scripts/setup-deps.sh)" >&2; exit 1; }
build=build-cov

report_only=false
[ "${1:-}" != "--report" ] || report_only=true
tests=0
if ! $report_only; then
    # Atomic counters: streamex runs threads (ZeroMQ actors, the agent), and
    # counters updated by two threads at once can go negative, which gcovr
    # refuses ("branch taken -1").
    scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=Debug \
        "-DCMAKE_C_FLAGS=--coverage -fprofile-update=atomic" -DCMAKE_EXE_LINKER_FLAGS=--coverage
    # Counters add up across runs: start from zero so the figures are this run's.
    find "$build" -name '*.gcda' -delete
    ctest --test-dir "$build" -L 'unit|cli' -E '^(cli_fuzz|cli_build_types)$' -j2 --no-tests=error \
        --output-on-failure >"$build/coverage-ctest.log" 2>&1 || tests=$?
    tail -n 3 "$build/coverage-ctest.log"
fi

# --gcov-ignore-parse-errors: a counter file a test's process left half
# written would otherwise lose the whole report. The JSON keeps every line's
# counts, so the table below can leave the self-tests out.
gcovr --root . --object-directory "$build" --gcov-ignore-parse-errors \
    --filter 'common/' --filter 'proto/' --filter 'worker/' --filter 'coordinator/' --filter 'cli/' \
    --json-pretty --output "$build/coverage.json" 2>"$build/gcovr.log" ||
    { cat "$build/gcovr.log" >&2; exit 1; }
python3 - "$build/coverage.json" scripts/verdict-files.txt tests/coverage-unreached.txt <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
verdict = {line.strip() for line in open(sys.argv[2]) if line.strip() and not line.startswith("#")}
listed = {line.strip() for line in open(sys.argv[3]) if line.strip() and not line.startswith("#")}

# A module's self-test sits at its bottom, from its "---- self-test" banner
# (else its first test function) on: the same rule as scripts/mutate.sh. Its
# SX_CHECKs are branches that pass one way only, so "code" counts the lines
# above it: the product's own lines and branches.
selftest = re.compile(r"^/\* -+ self-test|^static [a-z_ ]*test_[a-z0-9_]*\(|^void sx_[a-z0-9_]*_test\(")

def code_end(path):
    for number, text in enumerate(open(path, errors="replace"), 1):
        if selftest.match(text):
            return number
    return 1 << 30

def tally(lines, below):
    counts = [0, 0, 0, 0]  # lines covered, lines, branches covered, branches
    for line in lines:
        if line["gcovr/noncode"] or line["line_number"] >= below:
            continue
        counts[0] += line["count"] > 0
        counts[1] += 1
        counts[2] += sum(b["count"] > 0 for b in line["branches"])
        counts[3] += len(line["branches"])
    return counts

def pct(covered, total):
    return f"{100.0 * covered / total:5.1f} %" if total else "    - "

def row(name, c, mark=""):
    return (f"{mark:1} {name:<30} lines {pct(c[0], c[1])} ({c[0]}/{c[1]})"
            f"  branches {pct(c[2], c[3])} ({c[2]}/{c[3]})")

files = sorted(report["files"], key=lambda f: f["file"])
whole, code = {}, {}
for f in files:
    whole[f["file"]] = tally(f["lines"], 1 << 30)
    code[f["file"]] = tally(f["lines"], code_end(f["file"]))
print("whole files (self-tests included):")
for f in files:
    print(row(f["file"], whole[f["file"]], "*" if f["file"] in verdict else ""))
total = [sum(c[i] for c in whole.values()) for i in range(4)]
print(row("TOTAL", total))
print("\nverdict-deciding files (scripts/verdict-files.txt), code above the self-test:")
for f in files:
    if f["file"] in verdict:
        print(row(f["file"], code[f["file"]], "*"))
for name in sorted(verdict - set(whole)):
    print(f"* {name:<30} not compiled or never run")

# Each line of those files that no test ran is either listed in
# tests/coverage-unreached.txt with its reason or printed here; a listed line
# that a test runs now is printed too, to be taken off the list. Lines are
# named as scripts/mutate.sh names mutants: FILE(FUNCTION): the line.
definition = re.compile(r"^[A-Za-z_][^;=()]*?\b([A-Za-z_]\w*)\s*\(")
def named(path, source, number):
    function = ""
    for text in reversed(source[:number]):
        found = definition.match(text)
        if found and not text.rstrip().endswith(";"):
            function = f"({found.group(1)})"
            break
    return f"{path}{function}: {' '.join(source[number - 1].split())}"
# A listed line stands for every line of its function with the same text
# ("return;"): it is stale only when a test runs all of them.
unlisted, missed = [], set()
for f in files:
    if f["file"] not in verdict:
        continue
    source = open(f["file"], errors="replace").read().split("\n")
    end = code_end(f["file"])
    for line in f["lines"]:
        if line["gcovr/noncode"] or line["line_number"] >= end or line["count"] > 0:
            continue
        name = named(f["file"], source, line["line_number"])
        missed.add(name)
        if name not in listed:
            unlisted.append(name)
stale = sorted(name for name in listed if name not in missed)
print(f"\nlines no test runs, not in tests/coverage-unreached.txt: {len(unlisted)}")
for name in unlisted:
    print(f"  {name}")
if stale:
    print(f"listed in tests/coverage-unreached.txt, run by a test now: {len(stale)}")
    for name in stale:
        print(f"  {name}")
PY
[ "$tests" -eq 0 ] || { echo "coverage.sh: a test failed (see $build/coverage-ctest.log)" >&2; exit 1; }
