#!/usr/bin/env bash
# tests/cli/stall.sh: a stopped process costs no task an attempt it did not owe.
# A coordinator and two worker processes with the simulated executor run the
# first 16 tasks of the sample bench (400 ms each), beats every 100 ms, a
# worker dead after 1 s of silence. Each case stops one process (SIGSTOP) for
# 3 s while tasks run, the way a suspended VM, a swap storm or a debugger
# stops it, then lets it go on (SIGCONT):
# - the coordinator: the workers (dead after 10 s on their side) wait for it;
#   waking up, it does not count the time it stood still as their silence
#   (sx_clock_stall_ms). No worker is declared dead, every task matches at
#   its first attempt. (Before, both workers were declared dead on waking,
#   their beats still unread, and an attempt of each of their tasks spent.)
# - a worker, while the coordinator waits for it (dead after 10 s): the same
#   from the worker's side. It does not take the coordinator for gone, and
#   every task matches at its first attempt.
# - a worker, past the coordinator's dead-after: it is declared dead, its
#   tasks are dispatched again at attempt 2 and its late results are dropped;
#   every task still matches, once.
# The 3 s are the stall itself; every wait is on a journal record or the
# process's exit, with a deadline.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
sim_predictions "$bench" "$tmp/preds.jsonl"
n=16
tasks=$(IFS=,; echo "${ids[*]:0:$n}")

# stalled_run NAME COORDINATOR_DEAD_AFTER_MS WORKER_DEAD_AFTER_MS WHO: a
# coordinator and workers NAME-a and NAME-b on OUT=$tmp/NAME (logs
# $tmp/NAME.coordinator.err, .a.err, .b.err); WHO (coord, wa or wb: their PIDs)
# is stopped for 3 s once both workers have settled a task; returns at the
# coordinator's exit.
stalled_run() {
    local name="$1" coordinator_dead="$2" worker_dead="$3" port w
    port=$(free_port)
    "$STREAMEX" coordinator --bench "$bench" --method "m=$tmp/preds.jsonl" --tasks "$tasks" \
        --output "$tmp/$name" --bind "tcp://127.0.0.1:$port" --heartbeat-ms 100 \
        --dead-after-ms "$coordinator_dead" > /dev/null 2> "$tmp/$name.coordinator.err" &
    coord=$!
    kill_at_exit "$coord"
    for w in a b; do
        "$STREAMEX" worker --connect "tcp://127.0.0.1:$port" --name "$name-$w" \
            --simulate delay_ms=400 --slots 2 --work-dir "$tmp/$name-wd-$w" \
            --heartbeat-ms 100 --dead-after-ms "$worker_dead" 2> "$tmp/$name.$w.err" &
        kill_at_exit "$!"
        eval "w$w=$!"
    done
    for w in a b; do
        wait_records "$tmp/$name/journal.jsonl" "\"worker\":\"$name-$w\"" 1
    done
    kill -STOP "${!4}"
    sleep 3 # the stall, not a wait for something
    kill -CONT "${!4}"
    wait "$coord" || fail "coordinator exited $?: $(tail -5 "$tmp/$name.coordinator.err")"
}

# check_results NAME MAX_ATTEMPTS: every task matched once, in at most
# MAX_ATTEMPTS attempts; prints how many took more than one.
check_results() {
    python3 - "$tmp/$1/m/results.jsonl" "$2" "${ids[@]:0:$n}" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
most, ids = int(sys.argv[2]), sys.argv[3:]
assert sorted(r["task_id"] for r in rows) == sorted(ids), f"results for {[r['task_id'] for r in rows]}"
for r in rows:
    assert r["status"] == "match" and 1 <= r["attempts"] <= most, f"{r['task_id']}: {r}"
print(sum(r["attempts"] > 1 for r in rows))
EOF
}

# expect_in FILE TEXT / expect_not_in FILE TEXT: FILE (a log) says TEXT, or not.
expect_in() { grep -qF "$2" "$1" || fail "$1 does not say '$2': $(cat "$1")"; }
expect_not_in() { ! grep -F "$2" "$1" || fail "$1 says '$2'"; }

echo "== the coordinator stopped for 3 s (3 x its dead-after): nobody is declared dead"
stalled_run coord 1000 10000 coord
expect_in "$tmp/coord.coordinator.err" "the coordinator stood still for"
expect_not_in "$tmp/coord.coordinator.err" "declared dead"
retried=$(check_results coord 1)
echo "$n tasks, $retried retried"

echo "== a worker stopped for 3 s (3 x its dead-after), the coordinator waiting: no reconnect"
stalled_run patient 10000 1000 wa
expect_in "$tmp/patient.a.err" "worker patient-a stood still for"
expect_not_in "$tmp/patient.a.err" "reconnecting"
expect_not_in "$tmp/patient.coordinator.err" "reconnected"
retried=$(check_results patient 1)
echo "$n tasks, $retried retried"

echo "== a worker stopped for 3 s (3 x the coordinator's dead-after): its tasks redone"
stalled_run lost 1000 1000 wa
expect_in "$tmp/lost.coordinator.err" "worker lost-a silent for 1000 ms: declared dead"
retried=$(check_results lost 2)
[ "$retried" -ge 1 ] || fail "no task of the stopped worker went to attempt 2"
echo "$n tasks, $retried at attempt 2"
echo "cli_stall: OK"
