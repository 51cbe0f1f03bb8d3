#!/usr/bin/env bash
# tests/cli/runtime.sh: `streamex runtime` without a real runtime: usage errors,
# bad option values, a missing install, a taken port, a Kafka that cannot be
# formatted (its log's tail in the error), an unreachable external pair
# (bounded by --start-timeout), and status/down of a pair that does not run.
set -uo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}"
work=$(make_tmpdir)
listener=""
stop_listener() {
    if [ -n "$listener" ]; then
        kill "$listener" 2>/dev/null
        wait "$listener" 2>/dev/null
    fi
}
at_exit stop_listener
export SX_RUNTIME_DIR="$work/rt"
mkdir -p "$SX_RUNTIME_DIR"

# expect CODE PATTERN ARGS...: streamex ARGS exits CODE and prints PATTERN.
expect() {
    local code="$1" pattern="$2"
    shift 2
    local got=0
    "$STREAMEX" "$@" >"$work/out" 2>&1 || got=$?
    if [ "$got" -ne "$code" ] || ! grep -qE -- "$pattern" "$work/out"; then
        fail_later "streamex $*: exit $got (want $code), output:"
        sed 's/^/    /' "$work/out" | head -n 30
    fi
}

expect 2 "usage: streamex runtime" runtime
expect 0 "usage: streamex runtime" runtime --help
expect 2 "unknown action 'frob'" runtime frob
expect 2 "unknown option '--bogus'" runtime status --bogus 1
expect 2 "worker index must be between 0 and 199, got 500" runtime status --index 500
expect 2 "--slots 'x': expected an integer in \\[0, 2147483647\\]" runtime up --slots x
expect 2 "--index needs a value" runtime up --index
expect 2 "TaskManager heap \(MiB\) must be between" runtime up --taskmanager-heap-mb 10
expect 2 "needs all of --kafka-bootstrap" runtime up --kafka-bootstrap h:1
expect 2 "--detach only goes with 'up'" runtime down --detach
expect 1 "not installed: run scripts/setup-runtime.sh" runtime up --index 150

# A pair that does not run: status says so for each component, down is fine.
expect 1 "kafka +0 stopped +down" runtime status --index 150
expect 1 "gateway +0 stopped +down" runtime status --index 150
expect 0 "pair 150 stopped" runtime down --index 150

# An external pair that does not answer fails within the timeout, naming it.
start=$(date +%s)
expect 1 "external kafka at 127.0.0.1:1 not ready after 2 s" runtime up \
    --kafka-bootstrap 127.0.0.1:1 --flink-gateway http://127.0.0.1:1 \
    --flink-rest http://127.0.0.1:1 --start-timeout 2
[ $(($(date +%s) - start)) -lt 20 ] || {
    fail_later "the external check took $(($(date +%s) - start)) s"
}

# An install with no jars: a taken port is found first, then Kafka's format
# fails and the error quotes the log.
printf 'SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\nSX_KAFKA_VERSION=3.9.1\n' \
    >"$SX_RUNTIME_DIR/installed.env"
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 24002)); s.listen(1)
print("ready", flush=True); time.sleep(60)' >"$work/listener" &
listener=$!
for _ in $(seq 1 50); do
    grep -q ready "$work/listener" && break
    sleep 0.1
done
expect 1 "pair 150: port 24002 \(Flink REST\) is taken" runtime up --index 150
kill "$listener"
wait "$listener" 2>/dev/null
listener=""
expect 1 "formatting Kafka's storage failed \(log .*kafka-format.log, last [0-9]+ lines:" \
    runtime up --index 150
grep -q "kafka.tools.StorageTool" "$work/out" || {
    fail_later "the format error does not quote the log: $(cat "$work/out")"
}

finish cli_runtime
