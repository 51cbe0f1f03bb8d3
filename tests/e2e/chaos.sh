#!/usr/bin/env bash
# tests/e2e/chaos.sh: the sample bench with two workers (a coordinator and two
# `streamex worker` processes, each starting its own Kafka + Flink pair) while
# worker A is hurt with kill -9, each time at a random moment while one of its
# jobs runs: first the worker process itself (it is started again, and must
# say it swept the topics its killed run left), then its Kafka broker,
# JobManager, TaskManager and SQL Gateway in turn (its watchdog brings each
# back before the next task). The run must still end with every ID settled
# once with the status examples/sample-bench/expected.jsonl gives (so EX =
# 17/30): a task caught by a fault is retried as infra_error, then gets its
# real verdict. Afterwards no JVM of either pair may run and no topic of the
# run may be left in either pair's Kafka data; jobs and gateway sessions
# live only in those JVMs (no HA, no persisted sessions), so none is left.
#
# SX_E2E_FIRST_INDEX (default 40): worker A uses that pair, worker B the next.
# SX_CHAOS_ROUNDS (default 1, what CI runs): rounds of the five kills, each a
# whole run; SX_CHAOS_SEED (default: the time) seeds the kill moments. A
# longer local campaign: SX_CHAOS_ROUNDS=10; it prints one line per round.
# ctest: serial
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
first="${SX_E2E_FIRST_INDEX:-40}"
rounds="${SX_CHAOS_ROUNDS:-1}"
seed="${SX_CHAOS_SEED:-$(date +%s)}"
runtime_dir="${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
pair_a="$runtime_dir/pairs/$first"
pair_b="$runtime_dir/pairs/$((first + 1))"
rest_a="http://127.0.0.1:$((21000 + 20 * first + 2))"
tmp=$(make_tmpdir)
coordinator="" worker_a="" worker_b="" job="" last_job=""
RANDOM=$seed
echo "e2e_chaos: pairs $first and $((first + 1)), $rounds round(s), seed $seed"

require_runtime "$runtime_dir"

jvms_of() { pgrep -f -- "-Dsx.pair=$1( |$)" || true; }

# SIGTERM to what this test started; SIGKILL to what still runs 60 s later
# (a worker starting its pair does not stop before the pair is up).
stop_all() {
    local pid deadline=$((SECONDS + 60))
    for pid in $coordinator $worker_a $worker_b; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in $coordinator $worker_a $worker_b; do
        while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
            sleep 0.2
        done
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    coordinator="" worker_a="" worker_b=""
}

cleanup() {
    stop_all
    pair_down "$first"
    pair_down "$((first + 1))"
}
at_exit cleanup

fail() {
    echo "FAIL: $*"
    for f in "$tmp"/round*/*.log; do
        [ -f "$f" ] && { echo "== tail of $f"; tail -n 15 "$f"; }
    done
    exit 1
}

# Waits (deadline in seconds) until the command succeeds.
wait_for() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "no $what after $seconds s"
        [ -z "$coordinator" ] || kill -0 "$coordinator" 2>/dev/null ||
            return 1 # the run ended: nothing left to hurt
        kill -0 "$worker_a" 2>/dev/null || fail "worker A exited (its pair did not start?)"
        sleep 0.2
    done
}

# True when a job of worker A runs that no earlier kill hit (each kill must
# catch a task of its own); its ID goes to $job.
new_job_running_on_a() {
    local jobs
    jobs=$(curl -sf "$rest_a/jobs/overview" 2>/dev/null) || return 1
    job=$(python3 -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    if j["state"] == "RUNNING" and j["name"].startswith("streamex ") and j["jid"] != sys.argv[1]:
        print(j["jid"])
        break' "$last_job" <<<"$jobs")
    [ -n "$job" ]
}

# pid of component $1 of pair A, checked against its command line.
component_pid() {
    local pid
    pid=$(cat "$pair_a/pids/$1.pid" 2>/dev/null) || return 1
    local cmdline
    cmdline=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    grep -qx -- "-Dsx.pair=$pair_a" <<<"$cmdline" &&
        grep -qx -- "-Dsx.component=$1" <<<"$cmdline" || return 1
    echo "$pid"
}

# Worker A runs two tasks at once, so that a kill catches jobs of several
# slots; worker B one. With four slots each, the two workers ran the sample
# through before worker A had started enough jobs for all five kills, and
# every round took a second run (377 s instead of about 170).
start_worker() { # name index log
    local slots=1
    [ "$1" = chaos-a ] && slots=2
    "$STREAMEX" worker --connect "tcp://127.0.0.1:$port" --name "$1" --index "$2" \
        --capacity 1 --slots "$slots" --work-dir "$dir/work-$1" >>"$3" 2>&1 &
}

# A random moment while a job of worker A runs: 0 to 1.9 s into it.
await_moment() {
    wait_for 900 "new job running on pair $first" new_job_running_on_a || return 1
    last_job=$job
    sleep "$((RANDOM % 2)).$((RANDOM % 10))"
}

kill_worker() {
    await_moment || return 1
    kill -9 "$worker_a"
    wait "$worker_a" 2>/dev/null || true
    echo "  killed worker A (pid $worker_a)"
    # Its JVMs get SIGTERM when it dies; the restarted worker needs the ports.
    local deadline=$((SECONDS + 120))
    while [ -n "$(jvms_of "$pair_a")" ]; do
        [ "$SECONDS" -lt "$deadline" ] || kill -9 $(jvms_of "$pair_a") 2>/dev/null || true
        sleep 0.2
    done
    start_worker chaos-a "$first" "$dir/worker-a.log"
    worker_a=$!
    swept=1
}

kill_component() {
    local name=$1 pid
    await_moment || return 1
    pid=$(component_pid "$name") || fail "no live $name of pair $first"
    kill -9 "$pid"
    echo "  killed $name of pair $first (pid $pid)"
}

# Every ID once, with its expected status, EX 17/30.
check_results() {
    python3 - "$bench" "$dir/out" <<'EOF' || fail "$dir: wrong results"
import json, sys
bench, out = sys.argv[1], sys.argv[2]
ids = open(bench + "/task_ids.txt").read().split()
expected = {e["task_id"]: e["status"] for e in map(json.loads, open(bench + "/expected.jsonl"))}
results = [json.loads(l) for l in open(out + "/sample/results.jsonl")]
bad = []
if [r["task_id"] for r in results] != ids:
    bad.append("not every ID once, in task_ids.txt order")
for r in results:
    if r["status"] != expected[r["task_id"]]:
        bad.append("%s: %s after %d attempt(s), expected %s: %s" % (
            r["task_id"], r["status"], r["attempts"], expected[r["task_id"]], r["detail"]))
s = json.load(open(out + "/summary.json"))["methods"]["sample"]
if (s["correct"], s["total"]) != (17, 30):
    bad.append("EX %s/%s, expected 17/30" % (s["correct"], s["total"]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
}

# The sx.* topics a stopped pair's Kafka still has: its KRaft metadata log
# (read with Kafka's own DumpLogSegments) minus the topics removed since.
live_topics() {
    local java="java" files
    [ -z "${JAVA_HOME:-}" ] || java="$JAVA_HOME/bin/java"
    files=$(ls "$1"/kafka-data/__cluster_metadata-0/*.checkpoint \
        "$1"/kafka-data/__cluster_metadata-0/*.log 2>/dev/null | sort | paste -sd,)
    [ -n "$files" ] || return 0
    "$java" -cp "$runtime_dir/kafka/libs/*" kafka.tools.DumpLogSegments \
        --cluster-metadata-decoder --files "$files" 2>/dev/null | python3 -c '
import json, re, sys
alive = {}
for line in sys.stdin:
    for m in re.finditer(r"\{\"type\":\"(TOPIC_RECORD|REMOVE_TOPIC_RECORD)\".*?\}\}", line):
        record = json.loads(m.group(0))
        data = record["data"]
        if record["type"] == "TOPIC_RECORD":
            alive[data["topicId"]] = data["name"]
        else:
            alive.pop(data["topicId"], None)
print(" ".join(sorted(n for n in alive.values() if n.startswith("sx."))))'
}

# Nothing of the run left: no JVM of either pair, no topic in its Kafka.
check_leftovers() {
    local left pair
    for pair in "$pair_a" "$pair_b"; do
        left=$(jvms_of "$pair")
        [ -z "$left" ] || fail "$dir: JVMs of $pair left: $left"
        left=$(live_topics "$pair")
        [ -z "$left" ] || fail "$dir: topics left in $pair: $left"
    done
}

# One run of the sample; hurts worker A with the kills still pending, in
# order, for as long as the run lasts.
chaos_run() {
    mkdir -p "$dir"
    [ -z "$(jvms_of "$pair_a")$(jvms_of "$pair_b")" ] ||
        fail "pair $first or $((first + 1)) already runs"
    port=$(free_port)
    start_worker chaos-a "$first" "$dir/worker-a.log"
    worker_a=$!
    start_worker chaos-b "$((first + 1))" "$dir/worker-b.log"
    worker_b=$!
    # One task may be caught by every kill of a run (the coordinator may give
    # its retry back to worker A): enough attempts for all five and its verdict.
    "$STREAMEX" coordinator --bench "$bench" --method "sample=$bench/predictions.jsonl" \
        --output "$dir/out" --bind "tcp://127.0.0.1:$port" --shard-size 1 --retries 6 \
        >"$dir/coordinator.out" 2>"$dir/coordinator.log" &
    coordinator=$!
    swept=0
    while [ "${#pending[@]}" -gt 0 ]; do
        if [ "${pending[0]}" = worker ]; then kill_worker || break; else
            kill_component "${pending[0]}" || break
        fi
        pending=("${pending[@]:1}")
        kills=$((kills + 1))
    done
    wait "$coordinator" || fail "$dir: the coordinator exited with an error"
    coordinator=""
    # A worker restarted after the run ended never hears the final goodbye.
    local w deadline=$((SECONDS + 60))
    for w in "$worker_a" "$worker_b"; do
        code=0
        while kill -0 "$w" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
        kill -0 "$w" 2>/dev/null && kill "$w"
        wait "$w" || code=$?
        [ "$code" -eq 0 ] || [ "$code" -eq 1 ] || [ "$code" -eq 143 ] ||
            fail "$dir: a worker exited with $code"
    done
    worker_a="" worker_b=""
    check_results
    if [ "$swept" -eq 1 ]; then
        grep -q "sweep: deleted topic sx\." "$dir/worker-a.log" ||
            fail "$dir: the restarted worker A did not sweep its killed run's topics"
    fi
    check_leftovers
}

for round in $(seq 1 "$rounds"); do
    pending=(worker kafka jobmanager taskmanager gateway)
    kills=0
    start=$SECONDS
    run=0
    # A run can end before every kill is done (a loaded machine restarts
    # slowly): the next run goes on with the rest.
    while [ "${#pending[@]}" -gt 0 ]; do
        run=$((run + 1))
        [ "$run" -le 3 ] || fail "round $round: 3 runs ended with ${pending[*]} not killed"
        dir="$tmp/round$round-run$run"
        chaos_run
    done
    retried=$(cat "$tmp/round$round"-run*/out/sample/results.jsonl |
        grep -c '"attempts":[2-9]' || true)
    infra=$(cat "$tmp/round$round"-run*/worker-a.log | grep -c ": infra_error (" || true)
    echo "round $round: OK in $((SECONDS - start)) s, $run run(s): 5 kills, $infra" \
        "infra_error attempt(s) on worker A, $retried task(s) settled after a retry"
done
echo "e2e_chaos: OK ($rounds round(s), seed $seed)"
