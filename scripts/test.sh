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

scripts/setup-deps.sh
scripts/setup-runtime.sh
# About 300 MB downloaded once (the 2.2 engine; Kafka is shared), cached
# with the runtime like the default engine's.
scripts/setup-runtime.sh --flink 2.2
scripts/setup-python.sh
scripts/setup-podman.sh
scripts/k8s/setup.sh
scripts/setup-ci-tools.sh >/dev/null
scripts/build.sh build
scripts/build.sh build-asan -DSX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

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

# One test at a time: two at once (ctest -j2) halve the unit and
# command-line phases, but test_coordinator then fails now and then, cause
# unknown (docs/internals/measurements.md), and a flaky CI costs more than
# the minutes saved. The e2e tests start Kafka + Flink pairs that want the
# machine's cores and memory.
echo "== unit and command-line tests under ASan+UBSan"
run_ctest --test-dir build-asan -L 'unit|cli'
echo "== unit and command-line tests (cli_fuzz and cli_build_types ran above: their own builds are the same for both)"
run_ctest --test-dir build -L 'unit|cli' -E '^(cli_fuzz|cli_build_types)$'
echo "== end-to-end tests on real Kafka and Flink"
run_ctest --test-dir build -L e2e
