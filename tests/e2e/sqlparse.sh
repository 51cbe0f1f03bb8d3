#!/usr/bin/env bash
# tests/e2e/sqlparse.sh: the SQL check against Flink's own parser, through the real
# SQL Gateway of one pair (tests/e2e/sqlparse.c does the work). Every
# statement of tests/data/sqlparse/corpus.jsonl (comments ended by \r, hints,
# quoting, several statements, Unicode) gets the check's verdict the corpus
# states; what the check accepts must parse in Flink as one INSERT into the
# sink, and the tricky statements it rejects must be refused by Flink too.
# An OPTIONS hint sent to Flink past the check must be refused by Flink
# (dynamic table options off). Any discrepancy found belongs in the corpus.
# Uses pair index $SX_E2E_SQLPARSE_INDEX (default 60): started here and
# stopped at the end, unless it was already running.
# ctest: pairs 60
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}" "${SX_BUILD_DIR:?}"
index="${SX_E2E_SQLPARSE_INDEX:-60}"
rt="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
rest="http://127.0.0.1:$((21000 + 20 * index + 2))"
gateway="http://127.0.0.1:$((21000 + 20 * index + 3))"
program="$SX_BUILD_DIR/tests/e2e_sqlparse"
started=0

cleanup() {
    if [ "$started" -eq 1 ]; then
        pair_down "$index"
    fi
}
at_exit cleanup

require_runtime "$rt"
[ -x "$program" ] || fail "no program at $program: build the tests first"

if ! curl -sf "$gateway/v1/info" >/dev/null 2>&1; then
    echo "== starting pair $index"
    started=1
    "$STREAMEX" -q runtime up --index "$index" --detach
fi

"$program" "$gateway" "$rest" "$SX_SOURCE_DIR/tests/data/sqlparse/corpus.jsonl"
