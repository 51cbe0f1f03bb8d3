#!/usr/bin/env bash
# test.sh: the README's test command. Installs everything the tests need
# (Debian packages, the Kafka + Flink runtime with the default engine and
# Flink 2.2 beside it (tests/e2e/flink22.sh), the pandas reference venv,
# Podman and its base image for the docker/ test, the single-node Kubernetes,
# Helm and the chart's validators of scripts/k8s, gitlab-ci-local and
# actionlint for the CI recipes of docs/ci), builds streamex twice
# (plain, and with ASan+UBSan) and runs the suites: every test on the plain
# build, the unit and command-line tests on the sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."

# Downloads in the background (their output in .test-logs/, printed when
# each ends) while Helm and the two streamex builds keep the cores
# busy: on a fresh machine the runtime, the venv and the base image are
# mostly waiting on the network. apt-install.sh takes one lock, so the
# background steps' packages and the foreground's never race.
logs=.test-logs
mkdir -p "$logs"
pids=()
names=()
# A failure in the foreground leaves no download running behind it.
trap '[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true' EXIT
in_background() {
    local name="$1"
    shift
    echo "== $name: in the background ($logs/$name.log)"
    "$@" >"$logs/$name.log" 2>&1 &
    pids+=("$!")
    names+=("$name")
}
# wait_background NAME...: waits for those background steps, prints their
# output, and forgets them (the exit trap must not signal a number the
# system may give to another process once one is reaped).
wait_background() {
    local name i
    for name in "$@"; do
        for i in "${!names[@]}"; do
            [ "${names[$i]}" = "$name" ] || continue
            if wait "${pids[$i]}"; then
                echo "== $name: done"
                cat "$logs/$name.log"
            else
                echo "FAIL: $name (its output follows)" >&2
                cat "$logs/$name.log" >&2
                return 1
            fi
            unset 'pids[i]' 'names[i]'
        done
    done
}
# One engine after the other: both engines share the Kafka download. The
# 2.2 engine is about 300 MB more, cached with the runtime like the
# default one.
runtime_both() { scripts/setup-runtime.sh && scripts/setup-runtime.sh --flink 2.2; }

scripts/setup-deps.sh
in_background runtime runtime_both
in_background python scripts/setup-python.sh
in_background podman scripts/setup-podman.sh
# Kubernetes, built from source, is the longest install and all computing;
# only e2e_k8s needs it. It builds at the lowest priority from now until
# the end-to-end tests, using what the downloads, the builds and the unit
# and command-line tests (a third of the cores idle under them: they wait
# more than they compute) leave, which keep the CPU whenever they want it.
in_background kubernetes nice -n 19 scripts/k8s/setup.sh kubernetes
# Helm and the chart's validators now: cli_helm needs them.
scripts/k8s/setup.sh chart-tools
scripts/setup-ci-tools.sh >/dev/null
scripts/build.sh build
scripts/build.sh build-asan -DSX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
wait_background runtime python podman

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# ctest reports a test that exits 77 as skipped; CI must run every test, so
# under CI=true a skipped test fails the run.
run_ctest() {
    local log
    log=$(mktemp)
    ctest --no-tests=error --output-on-failure "$@" | tee "$log"
    if [ "${CI:-}" = true ] && grep -q '\*\*\*Skipped' "$log"; then
        echo "FAIL: CI skipped a test (see ***Skipped above)" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
}

# Several tests at once: the tests wait on Flink, Kafka, subprocesses and
# deadlines more than they compute (docs/internals/measurements.md: four
# unit and command-line tests at once take 0.66-0.72 of the time two do),
# and a pair costs 1.2 GiB of 24, so the end-to-end tests run two at once.
# What a test shares is declared in its script (tests/CMakeLists.txt: "#
# ctest: serial" runs alone, "# ctest: pairs I" holds pair I), so two tests
# never start the same pair and the tests that time kills or signals, or
# start several pairs, run alone.
echo "== unit and command-line tests under ASan+UBSan"
run_ctest --test-dir build-asan -j4 -L 'unit|cli'
echo "== unit and command-line tests (cli_fuzz and cli_build_types ran above: their own builds are the same for both)"
run_ctest --test-dir build -j4 -L 'unit|cli' -E '^(cli_fuzz|cli_build_types)$'
wait_background kubernetes
echo "== end-to-end tests on real Kafka and Flink"
run_ctest --test-dir build -j2 -L e2e
