#!/usr/bin/env bash
# cli_format.sh: every C source and header of the tree is formatted as the
# repository's .clang-format says (run `clang-format -i FILE` to fix one).
set -euo pipefail
: "${SX_SOURCE_DIR:?}"
cd "$SX_SOURCE_DIR"
command -v clang-format >/dev/null || { echo "FAIL: clang-format not installed (scripts/setup-deps.sh)"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find common proto worker coordinator cli tests -name '*.[ch]')
[ "${#files[@]}" -gt 0 ] || { echo "FAIL: no C files found"; exit 1; }
if ! clang-format --dry-run -Werror "${files[@]}"; then
    echo "FAIL: files above are not clang-formatted"
    exit 1
fi
echo "cli_format: ${#files[@]} files formatted"
