#!/usr/bin/env bash
# tests/cli/rooms.sh: the house plan holds (tests/kit/rooms.py, the allowed
# directions written there): every #include of the program runs from the
# room that uses to the room that serves, no room reads another's private
# header, and no modules include each other in a circle. Then the checker
# itself is shown to catch each kind of offence, planted in a copy.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"
checker="$SX_SOURCE_DIR/tests/kit/rooms.py"

out=$(python3 "$checker" "$SX_SOURCE_DIR") || {
    echo "$out" >&2
    fail "an include breaks the house plan (see above)"
}
echo "$out"

tmp=$(make_tmpdir)
copy_tree() {
    rm -rf "$tmp/tree"
    mkdir -p "$tmp/tree"
    (cd "$SX_SOURCE_DIR" && tar cf - common proto coordinator worker cli) | tar xf - -C "$tmp/tree"
}
# plant FILE LINE EXPECTED: FILE gets LINE after its first include; the
# checker must fail and print EXPECTED exactly.
plant() {
    copy_tree
    sed -i "0,/^#include/s||$2\n#include|" "$tmp/tree/$1"
    local got status=0
    got=$(python3 "$checker" "$tmp/tree") || status=$?
    [ "$status" -eq 1 ] || fail "planted '$2' in $1: checker exited $status, not 1"
    grep -qxF -- "$3" <<<"$got" || fail "planted '$2' in $1: expected line '$3', got: $got"
}
plant common/files.c '#include "worker/pair/pair.h"' \
    'common/files.c: includes worker/pair/pair.h: common/ may not import worker/pair/ (allowed: none)'
plant worker/exec/executor.c '#include "worker/pair/pair_int.h"' \
    'worker/exec/executor.c: includes worker/pair/pair_int.h, private to worker/pair/'
plant common/ex/compare.h '#include "common/ex/score.h"' \
    'circle: common/ex/score -> common/ex/compare -> common/ex/score'
plant proto/proto.c '#include "common/nosuch.h"' \
    'proto/proto.c: includes common/nosuch.h, which is no header of a room'
echo "cli_rooms: OK"
