#!/usr/bin/env bash
# demo.sh: the README's first command. Installs everything (Debian packages,
# the Kafka + Flink runtime), builds streamex, then runs the main job on the
# bundled sample benchmark: `streamex run` with its defaults (two workers,
# each with its own Kafka + Flink pair), printing the EX table.
# Extra arguments go to `streamex run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/setup-runtime.sh
scripts/build.sh build
exec build/streamex run "$@"
