#!/usr/bin/env bash
# tests/cli/format.sh: every C source and header of the tree is formatted as the
# repository's .clang-format says (run `clang-format -i FILE` to fix one).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"
cd "$SX_SOURCE_DIR"
command -v clang-format >/dev/null || fail "clang-format not installed (scripts/setup-deps.sh)"
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find common proto worker coordinator cli tests -name '*.[ch]')
[ "${#files[@]}" -gt 0 ] || fail "no C files found"
if ! clang-format --dry-run -Werror "${files[@]}"; then
    fail "files above are not clang-formatted"
fi
echo "cli_format: ${#files[@]} files formatted"
