#!/usr/bin/env bash
# tests/cli/exec.sh: `streamex exec` at the command line without a runtime: --help,
# bad usage (exit 2 with a message saying what is wrong), an unknown task, a
# predictions file that does not load, and an external pair where nothing
# listens (exit 2 naming the address, within its short wait, no verdict
# printed). The executions themselves are in tests/e2e/exec.sh. Needs STREAMEX and
# SX_SOURCE_DIR (set by ctest).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"

bench="$SX_SOURCE_DIR/tests/data/e2e-bench"
work=$(make_tmpdir)

# run NAME EXPECTED_CODE EXPECTED_STDERR_PIECE ARGS...
run() {
    local name=$1 expected=$2 piece=$3
    shift 3
    local code=0
    "$STREAMEX" exec "$@" >"$work/$name.out" 2>"$work/$name.err" || code=$?
    [ "$code" = "$expected" ] || fail_later "$name: exit $code, expected $expected"
    if [ -n "$piece" ] && ! grep -qF -- "$piece" "$work/$name.err"; then
        fail_later "$name: stderr lacks '$piece':"
        sed 's/^/  stderr: /' "$work/$name.err" >&2
    fi
}

echo "SELECT 1" >"$work/q.sql"
echo '{"task_id": "filter", "sql": ' >"$work/broken.jsonl"

run help 0 "" --help
grep -q "^usage: streamex exec --bench BENCH --task ID" "$work/help.out" ||
    fail_later "--help does not print the usage"
run no_task 2 "--bench and --task are required" --bench "$bench"
run no_candidate 2 "exactly one of --sql FILE and --method NAME=PREDS" \
    --bench "$bench" --task filter
run two_candidates 2 "exactly one of" --bench "$bench" --task filter \
    --sql "$work/q.sql" --method "m=$bench/predictions.jsonl"
run half_external 2 "needs --kafka-bootstrap, --flink-gateway and --flink-rest together" \
    --bench "$bench" --task filter --sql "$work/q.sql" --kafka-bootstrap 127.0.0.1:1
run bad_index 2 "--index 'x'" --bench "$bench" --task filter --sql "$work/q.sql" --index x
run bad_profile 2 "unknown --profile 'p'" --bench "$bench" --task filter \
    --sql "$work/q.sql" --profile p
run bad_changelog 2 "--changelog '-1': expected an integer in [0, 1000000]" \
    --bench "$bench" --task filter --sql "$work/q.sql" --changelog -1
run unknown_option 2 "streamex exec: unknown option '--nope'" --bench "$bench" --nope
run unknown_task 2 "no task 'nosuch'" --bench "$bench" --task nosuch --sql "$work/q.sql"
run missing_sql_file 2 "$work/none.sql: cannot open" --bench "$bench" --task filter \
    --sql "$work/none.sql"
run broken_predictions 2 "broken.jsonl" --bench "$bench" --task filter \
    --method "m=$work/broken.jsonl"

start=$(date +%s)
run nothing_listens 2 "127.0.0.1:1" --bench "$bench" --task filter --sql "$work/q.sql" \
    --kafka-bootstrap 127.0.0.1:1 --flink-gateway http://127.0.0.1:1 \
    --flink-rest http://127.0.0.1:1
[ $(($(date +%s) - start)) -le 30 ] || fail_later "an external pair that is down took over 30 s"
[ ! -s "$work/nothing_listens.out" ] || fail_later "a pair that is down still printed a verdict"

finish cli_exec
