#!/usr/bin/env bash
# build.sh [DIR [CMAKE ARGS...]]: configures and builds streamex into DIR
# (default build/). Used by the README's commands and by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir"
