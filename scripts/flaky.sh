#!/usr/bin/env bash
# flaky.sh [RUNS]: hunts flaky tests. Builds the plain build (build/), then
# runs the unit and command-line suites (ctest -L 'unit|cli') RUNS times
# (default 20) while a CPU hog keeps every core busy, the way a loaded CI
# machine does, and lists every failure as "run N: TEST". Exits 1 if any run
# failed, 0 if all RUNS passed. The hog (one busy loop per core, at the
# priority of the tests) is always stopped, Ctrl-C included. Left out of the
# repeated runs: cli_fuzz (it fuzzes for a fixed time: minutes per run, and a crash it
# finds is a bug, not a flake; scripts/fuzz.sh is its tool), cli_format
# (clang-format over the tree: load cannot change its result) and
# cli_build_types (a compiler's verdict on the tree: the same too).
# Ctrl-C stops it with the list so far. Each run's ctest log is kept in
# build/flaky/run-N.log. Environment: SX_FLAKY_HOGS (busy loops, default the
# number of cores), SX_FLAKY_JOBS (ctest -j, default 2). Not part of CI: a
# tool to run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/flaky.sh [RUNS]" >&2; exit 2; }
hogs="${SX_FLAKY_HOGS:-$(nproc)}"
jobs="${SX_FLAKY_JOBS:-2}"
excluded='^(cli_fuzz|cli_format|cli_build_types)$'

scripts/build.sh build
logs=build/flaky
mkdir -p "$logs"
rm -f "$logs"/run-*.log

hog_pids=()
stop_hogs() {
    local pid
    for pid in "${hog_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait "${hog_pids[@]}" 2>/dev/null || true
    hog_pids=()
}
# Lists the failures of the runs done so far; returns 1 if there are any.
completed=0
report() {
    stop_hogs
    echo "flaky.sh: $completed of $runs runs in $((SECONDS - started)) s, ${#failures[@]} failures (logs in $logs/)"
    if [ ${#failures[@]} -gt 0 ]; then
        printf '%s\n' "${failures[@]}"
        return 1
    fi
}
failures=()
started=$SECONDS
trap stop_hogs EXIT
trap 'report || true; exit 130' INT
trap 'report || true; exit 143' TERM
for _ in $(seq "$hogs"); do
    # A subshell spinning in bash: no output, no file, killed by its pid.
    (while :; do :; done) &
    hog_pids+=($!)
done
echo "flaky.sh: $runs runs of ctest -L 'unit|cli' -E '$excluded' -j$jobs, $hogs busy loops"

for run in $(seq "$runs"); do
    log="$logs/run-$run.log"
    run_started=$SECONDS
    status=0
    ctest --test-dir build -L 'unit|cli' -E "$excluded" -j"$jobs" --no-tests=error \
        --output-on-failure >"$log" 2>&1 || status=$?
    # ctest's summary lists each failed test after "The following tests
    # FAILED:" as "<tab> 12 - cli_score (Failed)" (skipped ones are listed
    # under "did not run" and are not failures).
    failed=$(awk '/^The following tests FAILED:/ {f = 1; next}
        f && /^[[:space:]]+[0-9]+ - / {print $3; next} {f = 0}' "$log")
    if [ "$status" -ne 0 ] && [ -z "$failed" ]; then
        failed="ctest-exit-$status"
    fi
    for name in $failed; do
        failures+=("run $run: $name")
    done
    verdict=passed
    [ -z "$failed" ] || verdict="FAILED: $(echo $failed)"
    echo "run $run/$runs: $((SECONDS - run_started)) s, $verdict"
    completed=$run
done
report
