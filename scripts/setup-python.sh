#!/usr/bin/env bash
# setup-python.sh: creates <repo>/.venv (gitignored) holding the pandas 2.x
# reference that the EX differential test and benchmark score against
# (tests/ex_reference/), and scipy, the reference of the statistics test
# (tests/cli_stats_reference.sh). Every package is pinned, so the reference reads CSVs
# exactly the same way on every machine. A second run installs nothing.
# Prints the venv's python path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/.venv"
python="$venv/bin/python"

# pandas 2.2.3 and the exact versions of its runtime dependencies, and scipy.
pins=(
  pandas==2.2.3
  numpy==2.1.3
  python-dateutil==2.9.0.post0
  pytz==2024.2
  tzdata==2024.2
  six==1.16.0
  # scipy's binomtest: the exact McNemar p-value the statistics are held to;
  # 1.14.1 runs on the numpy above and needs nothing else.
  scipy==1.14.1
)

installed_matches_pins() {
  [ -x "$python" ] || return 1
  local frozen
  frozen="$("$python" -m pip freeze --disable-pip-version-check 2>/dev/null)" || return 1
  local pin
  for pin in "${pins[@]}"; do
    grep -qixF "$pin" <<<"$frozen" || return 1
  done
}

if installed_matches_pins; then
  echo "setup-python: $venv already has ${pins[*]}" >&2
else
  [ -x "$python" ] || python3 -m venv "$venv"
  echo "setup-python: installing ${pins[*]} into $venv" >&2
  "$python" -m pip install --quiet --disable-pip-version-check --no-input "${pins[@]}"
  installed_matches_pins || { echo "setup-python: pins not satisfied after install" >&2; exit 1; }
fi
echo "$python"
