#!/usr/bin/env bash
# tests/cli/options.sh: every command's option path (cli/options.h). An unknown
# option, an option without its value and a bad integer value are bad usage:
# exit 2, one line "streamex CMD: ..." naming the option (getopt's own
# message never adds a second), then the usage. Integers are whole decimal
# numbers in range: trailing garbage, overflow and out-of-range values are
# refused; the bounds themselves are accepted. Needs no Kafka or Flink: the
# valid values end in --help, a simulated run or `runtime status`.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}"

tmp=$(mktemp -d /tmp/sx-cli-options-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# runtime's pairs and install live here, not in the checkout's .runtime.
export SX_RUNTIME_DIR="$tmp/rt"
mkdir -p "$SX_RUNTIME_DIR"
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# refused LINE_START CMD ARGS...: streamex CMD ARGS exits 2; stderr's first
# line starts with "streamex CMD: LINE_START" and is the only one of its kind
# (none from getopt either, whose lines start "CMD: "); the usage follows.
refused() {
    local start=$1 command=$2
    shift 2
    local code=0
    "$STREAMEX" "$command" "$@" >"$tmp/out" 2>"$tmp/err" || code=$?
    local first
    first=$(head -n 1 "$tmp/err")
    if [ "$code" != 2 ]; then
        fail "$command $*: exit $code, expected 2"
    elif [[ "$first" != "streamex $command: $start"* ]]; then
        fail "$command $*: first line is '$first', expected 'streamex $command: $start...'"
    elif [ "$(grep -c "^streamex $command: \|^$command: " "$tmp/err")" != 1 ]; then
        fail "$command $*: the error is said more than once:"
        sed 's/^/  stderr: /' "$tmp/err" >&2
    elif ! grep -q "^usage: streamex $command" "$tmp/err"; then
        fail "$command $*: no usage after the error"
    elif [ -s "$tmp/out" ]; then
        fail "$command $*: wrote to stdout"
    fi
}

# accepted CODE CMD ARGS...: streamex CMD ARGS exits CODE (a set such as
# "0|1" allowed) and says nothing of bad usage.
accepted() {
    local want=$1 command=$2
    shift 2
    local code=0
    "$STREAMEX" "$command" "$@" >"$tmp/out" 2>"$tmp/err" || code=$?
    if ! [[ "$code" =~ ^($want)$ ]]; then
        fail "$command $*: exit $code, expected $want"
        sed 's/^/  stderr: /' "$tmp/err" | tail -n 5 >&2
    elif grep -q "^usage:" "$tmp/err"; then
        fail "$command $*: refused as bad usage:"
        sed 's/^/  stderr: /' "$tmp/err" | head -n 2 >&2
    fi
}

huge=99999999999999999999 # past LONG_MAX: strtol's overflow, not a clamp

echo "== an unknown option: said once, exit 2, for every command"
for command in check score run coordinator worker doctor exec merge report keygen; do
    refused "unknown option '--bogus'" "$command" --bogus
    refused "unknown option '--bogus=1'" "$command" --bogus=1
done
refused "unknown option '--bogus'" runtime status --bogus 1
# The pair's sizes are `runtime`'s (worker/pair/pair.h), not a worker's: a
# worker's --slots is the tasks it runs at once, its pair's TaskManager
# slots follow from it.
refused "unknown option '--taskmanager-heap-mb'" worker --taskmanager-heap-mb 512
refused "unknown option '--taskmanager-heap-mb'" run --taskmanager-heap-mb 512
refused "--slots '0': expected an integer in [1, 64]" worker --slots 0
refused "--slots '65': expected an integer in [1, 64]" run --slots 65
refused "unknown option '--slots'" coordinator --slots 4

echo "== an option without its value"
refused "--bench needs a value" check --bench
refused "--bench needs a value" score --bench
refused "--output needs a value" run --output
refused "--bind needs a value" coordinator --bind
refused "--connect needs a value" worker --connect
refused "--bench needs a value" doctor --bench
refused "--bench needs a value" exec --bench
refused "--bench needs a value" merge --bench
refused "--dir needs a value" keygen --dir
refused "--runtime-dir needs a value" runtime status --runtime-dir
refused "--index needs a value" runtime status --index

echo "== bad integers: not a number, trailing garbage, overflow, out of range"
refused "--index '3x': expected an integer in [0, 199]" exec --index 3x
refused "--index '200': expected an integer in [0, 199]" exec --index 200
refused "--index '-1'" exec --index -1
refused "--index ''" exec --index ""
refused "--index ' 3'" exec --index " 3"
refused "--index '3x': expected an integer in [0, 199]" doctor --bench b --index 3x
refused "--index '200'" doctor --bench b --index 200
refused "--repeat '0': expected an integer in [1, 100]" doctor --bench b --repeat 0
refused "--workers '$huge'" doctor --bench b --workers $huge
refused "--shard-size '0': expected an integer in [1, 10000]" run --shard-size 0
refused "--shard-size '10001'" run --shard-size 10001
refused "--retries '$huge': expected an integer in [1, 100]" run --retries $huge
refused "--retries '-$huge'" run --retries -$huge
refused "--heartbeat-ms '1s'" run --heartbeat-ms 1s
refused "--dead-after-ms '19'" run --dead-after-ms 19
refused "--repeat '101'" run --repeat 101
refused "--workers '65': expected an integer in [1, 64]" run --workers 65
refused "--capacity '0'" run --capacity 0
refused "--first-index '200': expected an integer in [0, 199]" run --first-index 200
refused "--first-index + --workers goes past pair index 199" run --first-index 199 --workers 2
refused "--shard '1/0'" run --shard 1/0
refused "--shard '2/2'" run --shard 2/2
refused "--shard '0/2x'" run --shard 0/2x
refused "--shard '0/100001'" run --shard 0/100001
refused "--shard '$huge/2'" run --shard $huge/2
refused "--retries '0'" coordinator --retries 0
refused "--shard-size '$huge'" coordinator --shard-size $huge
refused "--capacity '1025': expected an integer in [1, 1024]" worker --capacity 1025
refused "--index '200': expected an integer in [0, 199]" worker --index 200
refused "--index '4.5'" worker --index 4.5
refused "--heartbeat-ms '9'" worker --heartbeat-ms 9
refused "--slots 'x': expected an integer in [0, 2147483647]" runtime status --slots x
refused "--start-timeout '$huge': expected an integer in [0, 2147483647]" runtime status --start-timeout $huge
refused "the worker index must be between 0 and 199, got 200" runtime status --index 200

echo "== valid values, the bounds included, still work"
accepted 0 exec --index 0 --index 199 --help
accepted 0 doctor --index 199 --repeat 100 --workers 1 --slots 64 --help
accepted 0 worker --capacity 1024 --slots 64 --index 199 --heartbeat-ms 10 --dead-after-ms 3600000 --help
accepted 0 coordinator --shard-size 10000 --retries 100 --repeat 100 --shard 99999/100000 --help
accepted 0 run --workers 64 --first-index 136 --capacity 1 --help
accepted 0 run --simulate delay_ms=1 --output "$tmp/run" --workers 1 --capacity 1 --slots 1 \
    --shard-size 1 --retries 1 --heartbeat-ms 100 --dead-after-ms 3000 \
    --first-index 199 --repeat 1 --shard 0/2
grep -q "^sample: EX = " "$tmp/out" || fail "the simulated run printed no EX line"
# Nothing runs in this empty install: status says so (1), it is no usage error.
accepted "0|1" runtime status --index 199 --slots 256 --start-timeout 3600

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "cli_options: ok"
