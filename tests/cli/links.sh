#!/usr/bin/env bash
# tests/cli/links.sh: every relative link of the Markdown files (README.md,
# docs/, the folders' READMEs) names a file that exists, and every #anchor a
# heading of its page (tests/kit/links.py). Then the checker itself is shown
# to catch a missing file and a missing heading, planted in a copy.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"
checker="$SX_SOURCE_DIR/tests/kit/links.py"
command -v git >/dev/null && git -C "$SX_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1 ||
    skip "SX_SOURCE_DIR is not a git checkout: the checker lists the files git tracks"

out=$(python3 "$checker" "$SX_SOURCE_DIR") || {
    echo "$out" >&2
    fail "a relative link in the Markdown files is broken (see above)"
}
echo "$out"

tmp=$(make_tmpdir)
mkdir -p "$tmp/tree/docs"
git -C "$tmp/tree" init -q
# A heading with a code span keeps its text in the anchor, as GitHub's does.
printf '# Top\n\n## The part (for `score`)\n\n[a](docs/b.md) [c](#the-part-for-score) [d](docs/b.md#gone)\n' \
    > "$tmp/tree/README.md"
printf '# B\n\n[back](../README.md#top) [e](missing.md)\n' > "$tmp/tree/docs/b.md"
status=0
got=$(python3 "$checker" "$tmp/tree") || status=$?
[ "$status" -eq 1 ] || fail "planted links: checker exited $status, not 1: $got"
want="README.md:5: docs/b.md#gone: no heading #gone in docs/b.md
docs/b.md:3: missing.md: no docs/missing.md
links: 2 broken of 5 relative links"
[ "$got" = "$want" ] || fail "planted links: expected
$want
got
$got"
echo "cli_links: OK"
