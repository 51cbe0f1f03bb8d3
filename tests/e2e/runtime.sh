#!/usr/bin/env bash
# tests/e2e/runtime.sh: the worker's own Kafka + Flink pair, for real (docs/install.md).
#  1. `runtime up --detach` starts pair A; status reports every component
#     healthy; a bounded streaming INSERT from a Kafka source table into an
#     upsert-kafka sink runs through the SQL Gateway (tests/e2e/runtime_job.c:
#     topics made with librdkafka's admin API, rows produced, output topic read
#     and checked); `runtime down` leaves no process and no listening port.
#  2. The watchdog: `runtime up` in the foreground brings back a TaskManager
#     killed with SIGKILL, and stops the whole pair on SIGTERM.
#  3. Two pairs side by side (A detached, B in a foreground `up`, started at
#     once) both run the job; A stops with `down`, and B's JVMs follow its
#     `up` when that is killed with SIGKILL (no orphans).
# Prints the figures: start-up time, resident memory at idle, job time.
# Pair indexes $SX_E2E_RUNTIME_INDEX (default 10) and the next one.
# ctest: pairs 10 11
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}" "${SX_BUILD_DIR:?}"
a="${SX_E2E_RUNTIME_INDEX:-10}"
b=$((a + 1))
rt="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
work=$(make_tmpdir)
up_pid=""

cleanup() {
    if [ -n "$up_pid" ]; then
        kill "$up_pid" 2>/dev/null || true
        wait "$up_pid" 2>/dev/null || true
    fi
    pair_down "$a"
    pair_down "$b"
}
at_exit cleanup


[ -f "$rt/installed.env" ] || fail "runtime not installed in $rt: run scripts/setup-runtime.sh"

# The job program, built by CMake from tests/e2e/runtime_job.c.
job="$SX_BUILD_DIR/tests/e2e_runtime_job"
[ -x "$job" ] || fail "no job program at $job: build the tests first"

port() { echo $((21000 + 20 * $1 + $2)); }

# Number of JVMs of pair $1 (grep -c reads all its input: no SIGPIPE under pipefail).
jvms_of() {
    ps -C java -o args= | grep -cF -- "-Dsx.pair=$rt/pairs/$1 " || true
}

# Fails unless no JVM of pair $1 runs and none of its ports listens.
check_gone() {
    local index="$1"
    [ "$(jvms_of "$index")" -eq 0 ] || fail "pair $index: $(jvms_of "$index") JVM(s) still running"
    local p
    for p in $(seq 0 9); do
        [ -z "$(ss -ltnH "sport = :$(port "$index" "$p")")" ] ||
            fail "pair $index: port $(port "$index" "$p") still listens"
    done
}

# wait_up PID OUT ERR: waits until a foreground `runtime up` printed its endpoints.
wait_up() {
    local _
    for _ in $(seq 1 480); do
        grep -q "^gateway=" "$2" && return 0
        kill -0 "$1" 2>/dev/null || fail "foreground up died: $(tail -n 20 "$3")"
        sleep 0.5
    done
    fail "foreground up did not come up: $(tail -n 20 "$3")"
}

run_job() {
    local index="$1"
    "$job" "127.0.0.1:$(port "$index" 0)" "http://127.0.0.1:$(port "$index" 3)" \
        "http://127.0.0.1:$(port "$index" 2)" "pair$index"
}

echo "== 1. pair $a: up, status, job, down"
check_gone "$a"
start=$(date +%s.%N)
"$STREAMEX" runtime up --detach --index "$a" >"$work/up.out" || fail "runtime up failed"
echo "figure: pair start-up $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
grep -qx "gateway=http://127.0.0.1:$(port "$a" 3)" "$work/up.out" || fail "up printed: $(cat "$work/up.out")"
# `up --detach` returns once every component answered its health check.
"$STREAMEX" runtime status --index "$a" >"$work/status.out" ||
    fail "status after up: $(cat "$work/status.out")"
for c in kafka jobmanager taskmanager gateway; do
    grep -qE "^$c +[0-9]+ running +healthy" "$work/status.out" || fail "status: $c not healthy"
done
echo "figure: resident memory at idle: $(awk '$1 == "total" {print $2}' "$work/status.out") MiB"
# A second up on a running pair is refused and leaves it alone.
if "$STREAMEX" runtime up --detach --index "$a" >/dev/null 2>"$work/again.err"; then
    fail "a second up of a running pair succeeded"
fi
grep -q "already runs" "$work/again.err" || fail "second up: $(cat "$work/again.err")"
run_job "$a" | tee "$work/job.out" || fail "the job on pair $a failed"
echo "figure: trivial job $(sed -n 's/^job finished in //p' "$work/job.out")"
"$STREAMEX" runtime down --index "$a" || fail "runtime down failed"
check_gone "$a"
if "$STREAMEX" runtime status --index "$a" >/dev/null 2>&1; then
    fail "status of a stopped pair exits 0"
fi

echo "== 2. pair $a: the watchdog restarts a dead TaskManager; SIGTERM stops all"
"$STREAMEX" runtime up --index "$a" >"$work/fg.out" 2>"$work/fg.err" &
up_pid=$!
wait_up "$up_pid" "$work/fg.out" "$work/fg.err"
tm="$(cat "$rt/pairs/$a/pids/taskmanager.pid")"
kill -9 "$tm"
for _ in $(seq 1 240); do
    new="$(cat "$rt/pairs/$a/pids/taskmanager.pid" 2>/dev/null || true)"
    if [ -n "$new" ] && [ "$new" != "$tm" ] &&
        "$STREAMEX" runtime status --index "$a" >/dev/null 2>&1; then
        break
    fi
    sleep 0.5
done
"$STREAMEX" runtime status --index "$a" >/dev/null 2>&1 || fail "pair not healthy after the kill"
grep -q "taskmanager (pid $tm) died: restarting" "$work/fg.err" || fail "no restart logged"
kill -TERM "$up_pid"
rc=0
wait "$up_pid" || rc=$?
# Stopped by a signal, like every command: 128 + 15, after stopping the pair.
[ "$rc" = 143 ] || fail "foreground up exited with $rc after SIGTERM, not 143"
up_pid=""
check_gone "$a"

echo "== 3. pairs $a (detached) and $b (foreground, then SIGKILLed) side by side"
"$STREAMEX" runtime up --detach --index "$a" >/dev/null 2>"$work/a.err" &
pa=$!
"$STREAMEX" runtime up --index "$b" >"$work/b.out" 2>"$work/b.err" &
up_pid=$!
wait "$pa" || fail "pair $a: $(tail -n 20 "$work/a.err")"
wait_up "$up_pid" "$work/b.out" "$work/b.err"
run_job "$a" >"$work/ja.out" &
ja=$!
run_job "$b" >"$work/jb.out" &
jb=$!
wait "$ja" || fail "the job on pair $a failed beside pair $b"
wait "$jb" || fail "the job on pair $b failed beside pair $a"
cat "$work/ja.out" "$work/jb.out"
"$STREAMEX" runtime down --index "$a" || fail "down $a"
check_gone "$a"
# The JVMs of a pair whose owner dies without cleaning up follow it (no orphans).
kill -9 "$up_pid"
wait "$up_pid" 2>/dev/null || true
up_pid=""
for _ in $(seq 1 120); do
    [ "$(jvms_of "$b")" -eq 0 ] && break
    sleep 0.5
done
check_gone "$b"
echo "e2e_runtime: OK"
