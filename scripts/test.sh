#!/usr/bin/env bash
# test.sh: the README's test command. Installs everything the tests need
# (Debian packages, the Kafka + Flink runtime, the pandas reference venv),
# builds streamex twice (plain, and with ASan+UBSan) and runs the suites:
# every test on the plain build, the unit and command-line tests on the
# sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-deps.sh
scripts/setup-runtime.sh
scripts/setup-python.sh
scripts/build.sh build
scripts/build.sh build-asan -DSX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== unit and command-line tests under ASan+UBSan"
ctest --test-dir build-asan -L 'unit|cli' --output-on-failure
echo "== all tests"
ctest --test-dir build --output-on-failure
