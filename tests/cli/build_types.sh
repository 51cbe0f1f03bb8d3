#!/usr/bin/env bash
# tests/cli/build_types.sh: the tree builds with -Werror in Release (-O3) too, not
# only in the RelWithDebInfo and Debug builds the other tests use. GCC's -O3
# inlines deeper and then warns about paths -O2 never sees (a format that may
# be cut, an array index past its end); a user who builds Release must not
# get a broken build. Built in a temporary folder; nothing is run from it.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"

out=$(make_tmpdir)
cmake -S "$SX_SOURCE_DIR" -B "$out/release" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    >"$out/configure.log" 2>&1 || fail "configuring Release: $(tail -n 5 "$out/configure.log")"
cmake --build "$out/release" -j 2 >"$out/build.log" 2>&1 ||
    fail "building Release with -Werror: $(grep -m 5 -E 'error:|warning:' "$out/build.log")"
[ -x "$out/release/streamex" ] || fail "the Release build made no streamex"
echo "cli_build_types: OK"
