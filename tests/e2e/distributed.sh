#!/usr/bin/env bash
# tests/e2e/distributed.sh: a distributed run on the real runtime: a coordinator
# and one `streamex worker` process that starts its own Kafka + Flink pair
# (index 9), executing a deterministic subset of the sample bench
# (--shard 0/10, three tasks) and returning final CSVs over ZeroMQ. The
# verdicts must be those examples/sample-bench/expected.jsonl gives.
# ctest: pairs 9
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
tmp=$(make_tmpdir)
worker=""
cleanup() {
    [ -n "$worker" ] && kill "$worker" 2>/dev/null && wait "$worker" 2>/dev/null
}
at_exit cleanup

port=$(free_port)
"$STREAMEX" worker --connect "tcp://127.0.0.1:$port" --index 9 --name e2e-w9 \
    --work-dir "$tmp/work" 2> "$tmp/worker.log" &
worker=$!
timeout 900 "$STREAMEX" coordinator --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --output "$tmp/out" --bind "tcp://127.0.0.1:$port" --shard 0/10 > "$tmp/coord.out" \
    2> "$tmp/coord.log" &
coord=$!
# Whichever ends first: a worker that cannot start its pair would otherwise
# leave the coordinator waiting for a worker until its timeout.
rc=0
wait -n -p first "$worker" "$coord" || rc=$?
if [ "$first" = "$worker" ] && [ "$rc" != 0 ]; then
    kill "$coord" 2> /dev/null
    worker=""
    tail -20 "$tmp/worker.log" >&2
    fail "the worker exited $rc before the run ended"
fi
wait "$coord" || { tail -20 "$tmp/worker.log" >&2; fail "coordinator failed"; }
wait "$worker" || fail "worker did not end cleanly"
worker=""
results="$tmp/out/sample/results.jsonl"
[ "$(wc -l < "$results")" = 3 ] || fail "expected 3 results"
while read -r line; do
    id=$(sed 's/.*"task_id":"\([^"]*\)".*/\1/' <<< "$line")
    got=$(sed 's/.*"status":"\([^"]*\)".*/\1/' <<< "$line")
    want=$(grep "\"$id\"" "$bench/expected.jsonl" | sed 's/.*"status": "\([^"]*\)".*/\1/')
    [ "$got" = "$want" ] || fail "$id: $got, expected $want"
    grep -q '"worker":"e2e-w9"' <<< "$line" || fail "$id: not executed by the worker"
done < "$results"
echo "e2e_distributed: OK"
