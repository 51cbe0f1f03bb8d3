#!/usr/bin/env bash
# tests/cli/fuzz.sh: every libFuzzer target (tests/fuzz/) runs over its seed corpus
# and its kept crash inputs, then fuzzes for a short bounded time
# (SX_FUZZ_SECONDS per target, default 20, two targets at once): a crash, a
# leak or a hang fails. Needs clang: without it the test is skipped, except
# under CI (CI=true), where scripts/setup-deps.sh must have installed it.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"
command -v clang > /dev/null ||
    skip_unless_ci "clang is not installed (scripts/setup-deps.sh installs it)"
export SX_FUZZ_JOBS="${SX_FUZZ_JOBS:-2}"
export SX_FUZZ_BUILD="${SX_FUZZ_BUILD:-$SX_SOURCE_DIR/build-fuzz}"
exec bash "$SX_SOURCE_DIR/scripts/fuzz.sh" "${SX_FUZZ_SECONDS:-20}"
