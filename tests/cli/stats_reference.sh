#!/usr/bin/env bash
# tests/cli/stats_reference.sh: the statistics core (common/results/stats.h) held to
# independent computations through tests/cli/stats_probe.c: the generator and
# the bootstrap's draws and percentiles repeated exactly in Python and numpy,
# the bootstrap interval within 0.01 of a numpy bootstrap, McNemar's p-value
# to 1e-9 of scipy.stats.binomtest, pass@k against enumeration of the
# k-subsets and maj@n's vote against a count (tests/cli/stats_reference.py).
# Env: SX_STATS_SEED (the cases' seed, default 40).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}" "${SX_BUILD_DIR:?}"
probe="$SX_BUILD_DIR/tests/cli_stats_probe"
[ -x "$probe" ] || fail "no probe at $probe (build the tree first)"

# The pinned venv with scipy; a no-op when scripts/setup-python.sh already ran.
python="$("$SX_SOURCE_DIR/scripts/setup-python.sh" | tail -n 1)" ||
  skip_unless_ci "no pinned Python venv (scripts/setup-python.sh failed)"

"$python" "$SX_SOURCE_DIR/tests/cli/stats_reference.py" "$probe" --seed "${SX_STATS_SEED:-40}"
echo "cli_stats_reference: OK"
