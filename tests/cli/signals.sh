#!/usr/bin/env bash
# tests/cli/signals.sh: SIGINT or SIGTERM at a seeded random moment, start-up
# included, ends `run`, `coordinator` and `worker` cleanly: the status is
# 130/143 (or 1, resumable, once something was settled, or 0 if the run had
# already finished), never an abort or a core; check and score stop too; no ZeroMQ complaint on stderr;
# the journal is a valid prefix (whole JSON records, no task twice) and
# --resume completes it. The simulated executor keeps each trial under a
# second; SX_SIGNAL_TRIALS (default 24) and SX_SIGNAL_SEED choose how many
# and which moments (hundreds by hand: SX_SIGNAL_TRIALS=400).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
total=$(wc -l < "$bench/task_ids.txt")
trials="${SX_SIGNAL_TRIALS:-24}"
RANDOM="${SX_SIGNAL_SEED:-2026}"
tmp=$(make_tmpdir)
declare -A outcomes=()

# Waits (up to 10 s) until background process $1 runs streamex, not the
# forked shell that is about to exec it: the signal must reach streamex.
wait_exec() {
    for _ in $(seq 1000); do
        [ "$(cat "/proc/$1/comm" 2>/dev/null)" = streamex ] && return 0
        sleep 0.01
    done
    fail "process $1 never became streamex"
}

# Waits (up to 10 s) until streamex $1 has blocked SIGINT and SIGTERM (the
# first thing its main does: from then on a signal is taken by its listener
# thread). Before that, the dynamic loader is still at work and SIGTERM
# simply kills the process, exit 143 with no "stopped by signal" message.
wait_listening() {
    wait_exec "$1"
    local mask
    for _ in $(seq 1000); do
        mask=$(awk '/^SigBlk:/ {print $2}' "/proc/$1/status" 2>/dev/null || true)
        # SIGINT is bit 1 (0x2), SIGTERM bit 14 (0x4000).
        [ -n "$mask" ] && (((16#$mask & 0x4002) == 0x4002)) && return 0
        sleep 0.01
    done
    fail "streamex $1 never blocked SIGINT and SIGTERM"
}

# A moment between 0 and $1 ms, as seconds for sleep(1); one in two within
# the first 60 ms, while the process is still starting.
moment() {
    if ((RANDOM % 2)); then printf '0.%03d' $((RANDOM % 60)); else printf '0.%03d' $((RANDOM % $1)); fi
}
signal_name() { if ((RANDOM % 2)); then echo INT; else echo TERM; fi; }
code_of() { [ "$1" = INT ] && echo 130 || echo 143; }

# No abort, no sanitizer or ZeroMQ complaint in a trial's stderr.
check_stderr() {
    if grep -E "Assertion|dangling|AddressSanitizer|runtime error|core dumped|Bad file" \
        "$1" >&2; then
        fail "$2: see the lines above"
    fi
}

# Every journal line a whole JSON record of a settled task, no (method, task)
# twice.
check_journal() {
    local journal="$1" label="$2"
    [ -f "$journal" ] || return 0
    python3 - "$journal" "$label" <<'PY'
import json, sys
path, label = sys.argv[1], sys.argv[2]
seen = set()
with open(path, "rb") as f:
    data = f.read()
if data and not data.endswith(b"\n"):
    sys.exit(f"{label}: journal ends in a torn record")
for number, line in enumerate(data.splitlines(), 1):
    record = json.loads(line)
    if "result" not in record and number == 1:
        continue  # a header record (what the journal was computed from)
    key = (record["method"], record["result"]["task_id"])
    if key in seen:
        sys.exit(f"{label}: journal line {number} settles {key} twice")
    seen.add(key)
PY
}

lines_of() { [ -f "$1" ] && wc -l < "$1" | tr -d ' ' || echo 0; }
settled_in() { if [ -f "$1" ]; then grep -c '"result"' "$1" || true; else echo 0; fi; }

# One `run` trial: signal at a random moment, then the outcome's checks.
run_trial() {
    local n="$1" sig at out rc=0
    sig=$(signal_name)
    at=$(moment 1200)
    out="$tmp/run$n"
    "$STREAMEX" -q run --simulate delay_ms=40 --workers 2 --output "$out" \
        > /dev/null 2> "$out.err" &
    local pid=$!
    wait_exec "$pid"
    sleep "$at"
    kill -s "$sig" "$pid" 2>/dev/null || true
    wait "$pid" || rc=$?
    local label="run trial $n (SIG$sig at ${at}s, exit $rc)"
    check_stderr "$out.err" "$label"
    check_journal "$out/journal.jsonl" "$label"
    local settled
    settled=$(settled_in "$out/journal.jsonl")
    case "$rc" in
    0) [ "$settled" = "$total" ] || fail "$label: finished with $settled settled" ;;
    1) [ "$settled" -gt 0 ] || fail "$label: exit 1 with nothing settled"
       grep -q -- "--resume" "$out.err" || fail "$label: no resume hint" ;;
    "$(code_of "$sig")") [ "$settled" = 0 ] || fail "$label: $settled settled, not resumable" ;;
    *) fail "$label: unexpected exit status" ;;
    esac
    outcomes[$rc]=$((${outcomes[$rc]:-0} + 1))
    if [ "$rc" = 1 ]; then
        "$STREAMEX" -q run --simulate delay_ms=1 --workers 2 --resume --output "$out" \
            > /dev/null 2> "$out.resume.err" || fail "$label: --resume failed"
        [ "$(lines_of "$out/sample/results.jsonl")" = "$total" ] ||
            fail "$label: resumed run incomplete"
        check_journal "$out/journal.jsonl" "$label, resumed"
        [ "$(settled_in "$out/journal.jsonl")" = "$total" ] ||
            fail "$label: resumed journal has $(settled_in "$out/journal.jsonl") records"
    fi
    rm -rf "$out" "$out".*
}

# Waits up to 30 s for a log line in a file.
wait_for_line() {
    local pattern="$1" file="$2"
    for _ in $(seq 300); do
        grep -q -- "$pattern" "$file" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "no '$pattern' in $file within 30 s"
}

# One coordinator + worker trial: the worker is signalled at a random moment
# and must exit 130/143 (or 0 if the run ended first); then the coordinator.
process_trial() {
    local n="$1" port=$(free_port) out="$tmp/dist$n" rc=0
    "$STREAMEX" coordinator --bench "$bench" --method "m=$bench/predictions.jsonl" \
        --output "$out" --bind "tcp://127.0.0.1:$port" > /dev/null 2> "$out.coord.err" &
    local coord=$!
    kill_at_exit "$coord"
    wait_for_line "coordinator on" "$out.coord.err"
    local sig at
    sig=$(signal_name)
    at=$(moment 600)
    "$STREAMEX" -q worker --connect "tcp://127.0.0.1:$port" --simulate delay_ms=40 \
        --work-dir "$out.wd" > /dev/null 2> "$out.worker.err" &
    local worker=$!
    wait_exec "$worker"
    sleep "$at"
    kill -s "$sig" "$worker" 2>/dev/null || true
    wait "$worker" || rc=$?
    local label="worker trial $n (SIG$sig at ${at}s, exit $rc)"
    check_stderr "$out.worker.err" "$label"
    [ "$rc" = "$(code_of "$sig")" ] || [ "$rc" = 0 ] || fail "$label: unexpected exit status"
    rc=0
    sig=$(signal_name)
    kill -s "$sig" "$coord" 2>/dev/null || true
    wait "$coord" || rc=$?
    label="coordinator trial $n (SIG$sig, exit $rc)"
    check_stderr "$out.coord.err" "$label"
    check_journal "$out/journal.jsonl" "$label"
    case "$rc" in
    0 | 1) ;;
    "$(code_of "$sig")") [ "$(settled_in "$out/journal.jsonl")" = 0 ] ||
        fail "$label: settled tasks but not resumable" ;;
    *) fail "$label: unexpected exit status" ;;
    esac
    rm -rf "$out" "$out".*
}

# check and score on a bench of 60 copies of the sample (1,800 tasks): a
# SIGTERM as soon as signals are blocked stops check between two tasks, and
# score, signalled as it starts, leaves OUT untouched; both exit 143 (or 0 if
# already done, which the line says: then the kill finds no process).
big="$tmp/big"
mkdir -p "$big/tasks" "$big/gold" "$big/evaluation"
: > "$big/task_ids.txt"
: > "$big/sub.jsonl"
for k in $(seq 60); do
    while read -r id; do
        n="${id}_$k"
        cp -r "$bench/tasks/$id" "$big/tasks/$n"
        sed -i "s/\"$id\"/\"$n\"/" "$big/tasks/$n/task.json"
        cp "$bench/gold/$id.csv" "$big/gold/$n.csv"
        cp "$bench/evaluation/$id.json" "$big/evaluation/$n.json"
        echo "$n" >> "$big/task_ids.txt"
        echo "{\"task_id\": \"$n\", \"csv\": \"$big/gold/$n.csv\"}" >> "$big/sub.jsonl"
    done < "$bench/task_ids.txt"
done
echo "== check and score stop on SIGTERM"
rc=0
"$STREAMEX" check --bench "$big" > /dev/null 2> "$tmp/check.err" &
pid=$!
wait_listening "$pid"
kill -TERM "$pid" 2> /dev/null || true
wait "$pid" || rc=$?
case "$rc" in
143) grep -q "stopped by signal 15" "$tmp/check.err" || fail "check: no stop message" ;;
0) echo "   check finished before the signal: not interrupted" ;;
*) fail "check exited $rc after SIGTERM" ;;
esac
check_rc=$rc
rc=0
"$STREAMEX" -q score --bench "$big" --method "m=$big/sub.jsonl" --output "$tmp/score" \
    > /dev/null 2> "$tmp/score.err" &
pid=$!
wait_listening "$pid"
kill -TERM "$pid" 2> /dev/null || true
wait "$pid" || rc=$?
case "$rc" in
143) [ -z "$(ls -A "$tmp/score" 2>/dev/null)" ] || fail "score: SIGTERM left $(ls "$tmp/score")" ;;
0) [ "$(wc -l < "$tmp/score/m/results.jsonl")" = 1800 ] || fail "score: incomplete output" ;;
*) fail "score exited $rc after SIGTERM" ;;
esac
echo "   check exit $check_rc; score exit $rc"
rm -rf "$big"

# A worker signalled while its pair starts (here an external one that never
# answers) exits 143, not 2: the chart's workers Job fails for good on 2,
# where a deleted pod must be replaced.
echo "== SIGTERM to a worker while its pair starts"
rc=0
"$STREAMEX" worker --connect tcp://127.0.0.1:1 --work-dir "$tmp/starting.wd" \
    --kafka-bootstrap 127.0.0.1:1 --flink-gateway http://127.0.0.1:1 \
    --flink-rest http://127.0.0.1:1 >/dev/null 2>"$tmp/starting.err" &
pid=$!
wait_for_line "starting the Kafka + Flink pair 0" "$tmp/starting.err"
kill -TERM "$pid"
wait "$pid" || rc=$?
check_stderr "$tmp/starting.err" "worker signalled while its pair starts"
[ "$rc" = 143 ] || fail "worker signalled while its pair starts: exit $rc, not 143"
grep -q "streamex worker: pair 0: kafka: interrupted by signal 15" "$tmp/starting.err" ||
    fail "worker signalled while its pair starts: no 'interrupted by signal 15': $(cat "$tmp/starting.err")"

echo "== $trials signals to run at random moments"
for n in $(seq "$trials"); do run_trial "$n"; done
for rc in "${!outcomes[@]}"; do echo "   exit $rc: ${outcomes[$rc]} trial(s)"; done
echo "== $((trials / 4 + 1)) signals to a worker process, then its coordinator"
for n in $(seq $((trials / 4 + 1))); do process_trial "$n"; done
echo "cli_signals: OK"
