#!/usr/bin/env bash
# coverage.sh: line and branch coverage of the unit and command-line suites.
# Builds a Debug build with gcc --coverage into build-cov/, runs
# ctest -L 'unit|cli' there (cli_fuzz left out: it builds its own clang
# targets in build-fuzz/, which add nothing to build-cov's counters), then
# prints lines and branches per source file (gcovr, Debian package gcovr,
# installed by scripts/setup-deps.sh), the verdict-deciding files of
# scripts/verdict-files.txt marked with '*' and repeated in a table of their
# own. The JSON summary stays in build-cov/coverage.json. A failing test is
# reported but does not stop the report (its coverage is still counted); the
# script then exits 1. Not part of CI: a tool to run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v gcovr >/dev/null || { echo "coverage.sh: gcovr is not installed (scripts/setup-deps.sh)" >&2; exit 1; }
build=build-cov

# Atomic counters: streamex runs threads (ZeroMQ actors, the agent), and
# counters updated by two threads at once can go negative, which gcovr
# refuses ("branch taken -1").
scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_C_FLAGS=--coverage -fprofile-update=atomic" -DCMAKE_EXE_LINKER_FLAGS=--coverage
# Counters add up across runs: start from zero so the figures are this run's.
find "$build" -name '*.gcda' -delete
tests=0
ctest --test-dir "$build" -L 'unit|cli' -E '^cli_fuzz$' -j2 --no-tests=error \
    --output-on-failure >"$build/coverage-ctest.log" 2>&1 || tests=$?
tail -n 3 "$build/coverage-ctest.log"

# --gcov-ignore-parse-errors: a counter file a test's process left half
# written would otherwise lose the whole report.
gcovr --root . --object-directory "$build" --gcov-ignore-parse-errors \
    --filter 'common/' --filter 'proto/' --filter 'worker/' --filter 'coordinator/' --filter 'cli/' \
    --json-summary-pretty --output "$build/coverage.json"
python3 - "$build/coverage.json" scripts/verdict-files.txt <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
verdict = {line.strip() for line in open(sys.argv[2]) if line.strip() and not line.startswith("#")}

def row(f, mark=""):
    def pct(covered, total):
        return f"{100.0 * covered / total:5.1f} %" if total else "    - "
    return (f"{mark:1} {f['filename']:<30} lines {pct(f['line_covered'], f['line_total'])}"
            f" ({f['line_covered']}/{f['line_total']})"
            f"  branches {pct(f['branch_covered'], f['branch_total'])}"
            f" ({f['branch_covered']}/{f['branch_total']})")

files = sorted(summary["files"], key=lambda f: f["filename"])
for f in files:
    print(row(f, "*" if f["filename"] in verdict else ""))
print(f"  {'TOTAL':<30} lines {summary['line_percent']:5.1f} %  branches {summary['branch_percent']:5.1f} %")
print("\nverdict-deciding files (scripts/verdict-files.txt):")
for f in files:
    if f["filename"] in verdict:
        print(row(f, "*"))
missing = verdict - {f["filename"] for f in files}
for name in sorted(missing):
    print(f"* {name:<30} not compiled or never run")
PY
[ "$tests" -eq 0 ] || { echo "coverage.sh: a test failed (see $build/coverage-ctest.log)" >&2; exit 1; }
