#!/usr/bin/env bash
# tests/e2e/signals.sh: a stop signal to `runtime up` and to `exec` on the real
# Kafka + Flink pair ends them cleanly at any moment: exit 130 (SIGINT) or
# 143 (SIGTERM), no JVM of the pair left, no listening port, no temporary
# folder. Moments: during the pair's start-up (seeded, SX_SIGNAL_SEED), once
# it is healthy, and while exec's Flink job runs (the sample's timeout
# candidate, a job that would run for minutes).
# Pair index $SX_E2E_SIGNAL_INDEX (default 4); SX_SIGNAL_TRIALS start-up
# moments (default 2; more by hand).
# ctest: serial
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
index="${SX_E2E_SIGNAL_INDEX:-4}"
trials="${SX_SIGNAL_TRIALS:-2}"
RANDOM="${SX_SIGNAL_SEED:-4242}"
rt="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
work=$(make_tmpdir)
pid=""
cleanup() {
    [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
    pair_down "$index"
}
at_exit cleanup
[ -f "$rt/installed.env" ] || fail "runtime not installed in $rt: run scripts/setup-runtime.sh"

port() { echo $((21000 + 20 * index + $1)); }
jvms() { ps -C java -o args= | grep -cF -- "-Dsx.pair=$rt/pairs/$index " || true; }
code_of() { [ "$1" = INT ] && echo 130 || echo 143; }

# No JVM of the pair and none of its ports listening (JVMs get a few seconds
# to go after their parent's SIGTERM).
check_gone() {
    local label="$1" p
    for _ in $(seq 100); do [ "$(jvms)" -eq 0 ] && break; sleep 0.1; done
    [ "$(jvms)" -eq 0 ] || fail "$label: $(jvms) JVM(s) of pair $index left"
    for p in $(seq 0 9); do
        [ -z "$(ss -ltnH "sport = :$(port "$p")")" ] || fail "$label: port $(port "$p") still listens"
    done
}

# Waits up to $3 s for a line matching $1 in file $2 while $pid lives.
wait_line() {
    for _ in $(seq $(($3 * 10))); do
        grep -q -- "$1" "$2" && return 0
        kill -0 "$pid" 2>/dev/null || fail "process ended before '$1': $(tail -5 "$2")"
        sleep 0.1
    done
    fail "no '$1' within $3 s: $(tail -5 "$2")"
}

# Signals $pid with $1 and checks its exit status.
stop_with() {
    local sig="$1" label="$2" rc=0
    kill -s "$sig" "$pid"
    wait "$pid" || rc=$?
    pid=""
    grep -E "Assertion|dangling|core dumped" "$work/err" && fail "$label: see above"
    [ "$rc" = "$(code_of "$sig")" ] || fail "$label: exit $rc, expected $(code_of "$sig")"
    check_gone "$label"
    echo "   $label: exit $rc, pair gone"
}

check_gone "before the test"
for n in $(seq "$trials"); do
    at=$((1 + RANDOM % 15))
    sig=$([ $((RANDOM % 2)) = 0 ] && echo INT || echo TERM)
    echo "== runtime up, SIG$sig ${at}s into start-up"
    "$STREAMEX" runtime up --index "$index" > "$work/out" 2> "$work/err" &
    pid=$!
    for _ in $(seq $((at * 10))); do kill -0 "$pid" 2>/dev/null && sleep 0.1; done
    kill -0 "$pid" 2>/dev/null || fail "runtime up ended by itself: $(tail -5 "$work/err")"
    stop_with "$sig" "runtime up, SIG$sig at ${at}s"
done

echo "== runtime up, SIGTERM once healthy"
"$STREAMEX" runtime up --index "$index" > "$work/out" 2> "$work/err" &
pid=$!
wait_line "^gateway=" "$work/out" 400
stop_with TERM "runtime up, healthy"

echo "== exec, SIGINT while its Flink job runs"
jq_sql=$(python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["task_id"] == "sb17_trades_hopping": print(r["sql"])' "$bench/predictions.jsonl")
printf '%s\n' "$jq_sql" > "$work/slow.sql"
mkdir "$work/tmp"
TMPDIR="$work/tmp" "$STREAMEX" -v exec --bench "$bench" --task sb17_trades_hopping \
    --sql "$work/slow.sql" --index "$index" > "$work/out" 2> "$work/err" &
pid=$!
wait_line "job .* submitted" "$work/err" 400
stop_with INT "exec, job running"
[ -z "$(ls -A "$work/tmp")" ] || fail "exec left $(ls -A "$work/tmp") in TMPDIR"
echo "e2e_signals: OK"
