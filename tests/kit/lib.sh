# shellcheck shell=bash
# lib.sh: shell helpers shared by the command-line and end-to-end tests:
# how a test fails or skips, its temporary folders and what else it must undo
# when it ends (however it ends: exit, failure, Ctrl-C, a TERM from ctest's
# timeout), and the pieces several scripts repeat.
# Source it first, after `set -euo pipefail`: . "$(dirname "$0")/../kit/lib.sh"
# It takes over the EXIT, HUP, INT and TERM traps: register with at_exit,
# never with trap.

# ---- failing and skipping -------------------------------------------------

# fail MESSAGE...: the test fails here: says why on stderr, exits 1.
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# fail_later MESSAGE...: a failed check that does not stop the test: says why
# on stderr and counts it; finish, at the end, exits 1 if any was counted.
failures=0
fail_later() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# finish NAME: the end of a test that uses fail_later: "NAME: OK", or the
# count of failures on stderr and exit 1.
finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$1: $failures failure(s)" >&2
        exit 1
    fi
    echo "$1: OK"
}

# skip REASON...: the test cannot run here: says why, exits 77, which
# tests/CMakeLists.txt gives ctest as SKIP_RETURN_CODE (skipped, not passed).
skip() {
    echo "SKIP: $*"
    exit 77
}

# skip_unless_ci REASON...: skip, except under CI=true, where a test that
# cannot run is a failure (CI exists to run it).
skip_unless_ci() {
    if [ "${CI:-}" = true ]; then
        echo "SKIP: $*"
        fail "CI must run this test"
    fi
    skip "$@"
}

# require_runtime DIR: skips unless DIR holds an installed Kafka + Flink
# runtime (scripts/setup-runtime.sh).
require_runtime() {
    [ -f "$1/installed.env" ] || skip "no runtime in $1 (run scripts/setup-runtime.sh)"
}

# require_engine X.Y: skips, unless under CI, when streamex has no engine
# X.Y in its runtime folder (scripts/setup-runtime.sh --flink X.Y installs
# it); `streamex --version` lists the installed engines.
require_engine() {
    "$STREAMEX" --version | grep -qE -- "--flink $1\)\$" ||
        skip_unless_ci "no Flink $1 engine installed (scripts/setup-runtime.sh --flink $1)"
}

# ---- what a test undoes when it ends ----------------------------------------

_sx_exit_hooks=()
_sx_kill_pids=()
# The temporary folders of this test: their names say whose they are.
_sx_tmp_prefix="${TMPDIR:-/tmp}/sx-$(basename "$0" .sh)-$$"

# at_exit COMMAND: runs COMMAND (a function's name, or a command line) when
# the script ends, however it ends. The latest registered runs first, after
# the processes of kill_at_exit are killed and before the temporary folders
# are removed. A failing COMMAND does not stop the others.
at_exit() {
    _sx_exit_hooks+=("$1")
}

# kill_at_exit PID...: processes the test started in the background, killed
# (SIGKILL) when it ends if they still run.
kill_at_exit() {
    _sx_kill_pids+=("$@")
}

# make_tmpdir: makes a temporary folder and prints its path:
# tmp=$(make_tmpdir). It is removed when the test ends passed or skipped;
# when it fails (or SX_TEST_KEEP=1) it is kept for a look, and its path is
# said on stderr. Its name, sx-SCRIPT-PID.XXXXXX under $TMPDIR (default
# /tmp), is what registers it, so it works from the subshell of $(...).
make_tmpdir() {
    mktemp -d "$_sx_tmp_prefix.XXXXXX"
}

_sx_on_exit() {
    local rc=$? i
    # A child forked by the test (a background job, a subshell signalled
    # before its exec) must not undo its parent's world.
    [ "$BASHPID" = "$$" ] || return "$rc"
    trap - EXIT
    set +e
    for i in "${_sx_kill_pids[@]}"; do kill -9 "$i" 2> /dev/null; done
    for ((i = ${#_sx_exit_hooks[@]} - 1; i >= 0; i--)); do
        eval "${_sx_exit_hooks[$i]}"
    done
    for i in "$_sx_tmp_prefix".*; do
        [ -d "$i" ] || continue
        if { [ "$rc" = 0 ] || [ "$rc" = 77 ]; } && [ "${SX_TEST_KEEP:-0}" != 1 ]; then
            rm -rf "$i"
        else
            echo "kept $i" >&2
        fi
    done
    exit "$rc"
}
trap _sx_on_exit EXIT
# A signal ends the script through exit, so the EXIT trap runs.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- pieces several tests use -----------------------------------------------

# Prints a TCP port for a coordinator to bind on 127.0.0.1: random, below the
# kernel's ephemeral range (32768 and up here, where the JVMs' and clients'
# own sockets land, so a port picked there can be taken before the bind) and
# above the runtime pairs' ports (21000 + 20 * index, index below 200), and not
# listening now.
free_port() {
    local port
    for _ in $(seq 1 50); do
        port=$((25000 + RANDOM % 7700))
        if ! ss -Htln "sport = :$port" 2> /dev/null | grep -q .; then
            echo "$port"
            return 0
        fi
    done
    echo "free_port: no free port found in 25000-32699" >&2
    return 1
}

# sample_bench: the bundled sample bench, to read and not change: sets bench
# (its folder), ids (its task IDs, in task_ids.txt order) and total (how many).
# shellcheck disable=SC2034 # bench, ids and total are for the caller
# sample_short_timeout DIR [SECONDS]: copies the sample bench to DIR with
# sb17's timeout_s at SECONDS (default 30, as the sample ships it). Its
# candidate never ends in time (every 1-day window merges 86,400 one-second
# slices), so its verdict is "timeout" either way, and a test that is not
# about that task spends no more CPU on it than it must.
sample_short_timeout() {
    local dir="$1" seconds="${2:-30}" task
    cp -r "$SX_SOURCE_DIR/examples/sample-bench" "$dir"
    task="$dir/tasks/sb17_trades_hopping/task.json"
    sed -i "s/\"timeout_s\": [0-9]*/\"timeout_s\": $seconds/" "$task"
    grep -q "\"timeout_s\": $seconds" "$task" || fail "could not lower sb17's timeout in $task"
}

sample_bench() {
    bench="$SX_SOURCE_DIR/examples/sample-bench"
    mapfile -t ids < "$bench/task_ids.txt"
    total=${#ids[@]}
}

# sim_predictions BENCH FILE [SPEC]...: writes FILE, predictions for the
# simulated executor (worker/simexec.h), one line per task of BENCH's
# task_ids.txt, in order: SQL "SELECT 1 /*sim:match*/", changed by SPECs that
# name a task by its 0-based index: I=MARKER asks for another verdict
# (/*sim:MARKER*/), I=- leaves the task without a prediction, I+=TEXT puts
# TEXT after "SELECT 1" (a changed candidate, same verdict).
sim_predictions() {
    local bench="$1" file="$2" spec i
    shift 2
    local -A marker=() tail=()
    for spec in "$@"; do
        case "$spec" in
        *+=*) tail[${spec%%+=*}]=${spec#*+=} ;;
        *=*) marker[${spec%%=*}]=${spec#*=} ;;
        *) fail "sim_predictions: bad spec '$spec'" ;;
        esac
    done
    local -a task_ids
    mapfile -t task_ids < "$bench/task_ids.txt"
    : > "$file"
    for i in "${!task_ids[@]}"; do
        [ "${marker[$i]:-match}" = - ] && continue
        printf '{"task_id": "%s", "sql": "SELECT 1%s /*sim:%s*/"}\n' \
            "${task_ids[$i]}" "${tail[$i]:-}" "${marker[$i]:-match}" >> "$file"
    done
}

# The 95 % interval an EX line ends with (common/results/result.h), as an
# extended regular expression, for tests that pin an EX line but not its
# bounds (tests/cli/figures.sh checks the bounds).
SX_CI_RE=', 95% CI \[[01]\.[0-9]{4}, [01]\.[0-9]{4}\]'

# records FILE PATTERN: how many lines of FILE match PATTERN (0 if no FILE).
records() { [ -f "$1" ] && grep -c "$2" "$1" || true; }

# wait_records FILE PATTERN N: waits up to 60 s until FILE holds at least N
# lines matching PATTERN (a journal's records, a log's lines).
wait_records() {
    local file="$1" pattern="$2" n="$3"
    for _ in $(seq 600); do
        [ "$(records "$file" "$pattern")" -ge "$n" ] 2> /dev/null && return 0
        sleep 0.1
    done
    fail "$file: fewer than $n lines matching '$pattern' after 60 s"
}

# pair_down INDEX: stops runtime pair INDEX if it runs (an at_exit command
# of the e2e tests that start one).
pair_down() {
    "$STREAMEX" -q runtime down --index "$1" > /dev/null 2>&1 || true
}

# build_images LOGDIR: builds the images of docker/ (streamex-coordinator,
# then streamex-worker: they share their first layers) with podman-compose,
# as docker/README.md says, each build's log in LOGDIR; prints the time and
# the images' sizes. Docker's image format: the default OCI format drops
# HEALTHCHECK. Returns non-zero, with the failed build's tail on stderr.
build_images() {
    local logs=$1 service start
    start=$(date +%s)
    for service in coordinator worker; do
        BUILDAH_FORMAT=docker nice -n 10 podman-compose --no-ansi \
            -f "$SX_SOURCE_DIR/docker/compose.yaml" build "$service" > "$logs/build-$service.log" 2>&1 || {
            tail -n 30 "$logs/build-$service.log" >&2
            echo "building the $service image failed (log: $logs/build-$service.log)" >&2
            return 1
        }
    done
    echo "built in $(($(date +%s) - start)) s: streamex-coordinator $(image_mb streamex-coordinator)," \
        "streamex-worker $(image_mb streamex-worker)"
}

# image_mb IMAGE: the size of a Podman image, "N MB".
image_mb() {
    podman image inspect --format '{{.Size}}' "$1" | awk '{ printf "%d MB", $1 / 1e6 }'
}

# require_podman: skips (fails under CI=true) unless Podman, podman-compose
# and the base image of scripts/setup-podman.sh are here and can run a
# container.
require_podman() {
    command -v podman > /dev/null || skip_unless_ci "no podman: run scripts/setup-podman.sh"
    command -v podman-compose > /dev/null || skip_unless_ci "no podman-compose: run scripts/setup-podman.sh"
    podman image exists debian:bookworm ||
        skip_unless_ci "no debian:bookworm base image: run scripts/setup-podman.sh"
    podman run --rm debian:bookworm true > /dev/null 2>&1 ||
        skip_unless_ci "podman cannot run a container here: $(podman run --rm debian:bookworm true 2>&1 | tail -n 1)"
}
