#!/usr/bin/env bash
# e2e_compose.sh: docker/ for real, on Podman (scripts/setup-podman.sh). As a
# user would: builds both images from docker/compose.yaml, makes the CURVE
# keys with docker/make-keys.sh, and runs the compose file (a coordinator and
# two worker containers, each starting its own Kafka + Flink pair) on the
# bundled sample bench with its predictions. Checks:
#   1. the coordinator exits 0 and its results, copied to the host, hold
#      every task ID once with the status expected.jsonl gives
#      (tests/e2e/sample_verdicts.py: EX 17/30);
#   2. one worker container is killed (`podman kill`) after its first task:
#      the coordinator declares it dead, its shards are redone by the other
#      worker, and the verdicts of 1 do not change;
#   3. `down -v` leaves no container, pod, volume or network of the run.
# Prints the image sizes, the build time, the stack's start-up time (until
# both workers joined with their pairs up) and the wall time of the sample.
# Without Podman it prints "SKIP: ..." and exits 77; under CI=true that fails.
# SX_COMPOSE_PROJECT names the compose project (default sxe2e-PID).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"

bench="$SX_SOURCE_DIR/examples/sample-bench"
compose_file="$SX_SOURCE_DIR/docker/compose.yaml"
project="${SX_COMPOSE_PROJECT:-sxe2e-$$}"
tmp=$(make_tmpdir)
coord="${project}_coordinator_1"
victim="${project}_worker_1"
survivor="${project}_worker_2"

# Shows the tail of every container's log, so a failure in CI explains itself,
# and keeps the logs of the workers' pairs in $tmp.
fail() {
    echo "FAIL: e2e_compose: $*" >&2
    local c
    for c in "$coord" "$victim" "$survivor"; do
        echo "---- $c" >&2
        podman logs --tail 15 "$c" 2>&1 | cut -c1-300 >&2 || true
        [ "$c" = "$coord" ] ||
            podman cp "$c:/opt/streamex/.runtime/pairs/0/logs" "$tmp/pair-logs-$c" 2>/dev/null || true
    done
    exit 1
}

compose() {
    podman-compose --no-ansi -p "$project" -f "$compose_file" "$@" >>"$tmp/compose.log" 2>&1
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every second.
wait_until() {
    local limit=$1 what=$2 i
    shift 2
    for ((i = 0; i < limit; i++)); do
        "$@" && return 0
        sleep 1
    done
    fail "waited $limit s for: $what"
}

logged() { podman logs "$1" 2>&1 | grep -qE "$2"; }
state() { podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$1" 2>/dev/null; }
exited() { [ "$(state "$1" | cut -d' ' -f1)" = exited ]; }
joined_workers() { podman logs "$coord" 2>&1 | grep -c "worker .* joined" || true; }
# A worker's name: its container's hostname and pair index 0.
worker_name() { echo "$(podman inspect --format '{{.Config.Hostname}}' "$1")-0"; }
mb() { podman image inspect --format '{{.Size}}' "$1" | awk '{ printf "%d MB", $1 / 1e6 }'; }

command -v podman >/dev/null || skip_unless_ci "no podman: run scripts/setup-podman.sh"
command -v podman-compose >/dev/null || skip_unless_ci "no podman-compose: run scripts/setup-podman.sh"
podman image exists debian:bookworm || skip_unless_ci "no debian:bookworm base image: run scripts/setup-podman.sh"
podman run --rm debian:bookworm true >/dev/null 2>&1 ||
    skip_unless_ci "podman cannot run a container here: $(podman run --rm debian:bookworm true 2>&1 | tail -n 1)"
at_exit "compose down -v -t 5"

echo "== building the images with compose (one at a time: they share their first layers)"
# Docker's image format: the default OCI format drops HEALTHCHECK.
export BUILDAH_FORMAT=docker
start=$(date +%s)
for service in coordinator worker; do
    nice -n 10 podman-compose --no-ansi -f "$compose_file" build "$service" \
        >"$tmp/build-$service.log" 2>&1 || {
        tail -n 30 "$tmp/build-$service.log" >&2
        fail "building the $service image"
    }
done
echo "built in $(($(date +%s) - start)) s: streamex-coordinator $(mb streamex-coordinator)," \
    "streamex-worker $(mb streamex-worker)"

"$SX_SOURCE_DIR/docker/make-keys.sh" "$tmp/keys" >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')

echo "== up: a coordinator and two workers on the sample bench (project $project)"
start=$(date +%s)
STREAMEX_KEYS="$tmp/keys" STREAMEX_PORT="$port" STREAMEX_WORKERS=2 compose up -d --no-build ||
    fail "compose up (see $tmp/compose.log)"
wait_until 600 "both workers to join with their pairs up" test "$(joined_workers)" -ge 2
up=$(($(date +%s) - start))
echo "stack up in $up s"

echo "== kill $victim after its first task"
wait_until 600 "$victim to finish a task" logged "$victim" "task method/"
name=$(worker_name "$victim")
podman kill "$victim" >/dev/null
wait_until 60 "the coordinator to declare $name dead" \
    logged "$coord" "worker $name silent .* [1-9][0-9]* shards go back"

wait_until 900 "the coordinator to finish" exited "$coord"
wall=$(($(date +%s) - start))
[ "$(state "$coord")" = "exited 0" ] || fail "the coordinator ended $(state "$coord")"
wait_until 30 "$survivor to exit" exited "$survivor"
[ "$(state "$survivor")" = "exited 0" ] || fail "$survivor ended $(state "$survivor")"
[ "$(state "$victim")" = "exited 137" ] || fail "the killed $victim came back: $(state "$victim")"
podman logs "$coord" 2>&1 | grep "EX =" || true

echo "== the results, copied to the host"
# From the volume: podman 4.3's `cp` copies nothing out of a volume of a
# stopped container (and says nothing).
mkdir "$tmp/out"
podman volume export "${project}_results" | tar -x -C "$tmp/out" ||
    fail "cannot export the volume ${project}_results"
python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$tmp/out" method=predictions ||
    fail "verdicts differ from expected.jsonl (results in $tmp/out)"
other=$(worker_name "$survivor")
redone=$(python3 - "$tmp/out/method/results.jsonl" "$other" <<'EOF'
import json, sys
print(sum(1 for line in open(sys.argv[1])
          if json.loads(line)["worker"] == sys.argv[2] and json.loads(line)["attempts"] >= 2))
EOF
)
[ "$redone" -ge 1 ] || fail "no task of the killed $name was redone by $other"

echo "== down leaves nothing behind"
compose down -v -t 5 || fail "compose down (see $tmp/compose.log)"
left="$(podman ps -a --filter "label=io.podman.compose.project=$project" --format '{{.Names}}')"
left+="$(podman pod ps --filter "label=com.docker.compose.project=$project" --format '{{.Name}}')"
left+="$(podman volume ls --format '{{.Name}}' | grep "^$project" || true)"
left+="$(podman network ls --format '{{.Name}}' | grep "^$project" || true)"
[ -z "$left" ] || fail "left after down: $left"

echo "e2e_compose: OK (stack up in $up s, sample in $wall s from up, $redone task(s) of" \
    "the killed worker redone by the other)"
