#!/usr/bin/env bash
# tests/e2e/compose.sh: docker/ for real, on Podman (scripts/setup-podman.sh). As a
# user would: builds both images from docker/compose.yaml, makes the CURVE
# keys with docker/make-keys.sh, and runs the bundled sample bench with its
# predictions (sb17's timeout at 30 s) in the two deployments of docker/:
#   pairs   docker/compose.yaml: a coordinator and two worker containers, each
#           starting its own Kafka + Flink pair; one worker container is
#           killed (`podman kill`) after its first task: the coordinator
#           declares it dead and its shards are redone by the other worker;
#   shared  docker/compose-shared.yaml: a coordinator and two workers on one
#           shared Kafka broker and Flink session cluster (a JobManager, two
#           TaskManagers, the SQL Gateway) in containers of their own; both
#           workers run tasks on it at once, and when the run is over no job
#           runs and no topic is left on it (each worker removed its own, and
#           neither touched the other's).
# In each: the coordinator exits 0 and its results, copied to the host, hold
# every task ID once with the status expected.jsonl gives
# (tests/e2e/sample_verdicts.py: EX 17/30); `down -v` leaves no container,
# pod, volume or network of the run.
# Prints the image sizes, the build time, each stack's start-up time (until
# both workers joined with their pairs up) and the wall time of the sample.
# Without Podman it prints "SKIP: ..." and exits 77; under CI=true that fails.
# SX_COMPOSE_DEPLOYMENTS picks (default "pairs shared"); SX_COMPOSE_PROJECT
# names the compose projects' prefix (default sxe2e-PID).
# ctest: serial
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"

deployments="${SX_COMPOSE_DEPLOYMENTS:-pairs shared}"
prefix="${SX_COMPOSE_PROJECT:-sxe2e-$$}"
tmp=$(make_tmpdir)
# The sample with sb17's timeout at 30 s (tests/kit/lib.sh sample_short_timeout),
# mounted as the bench and the predictions of both deployments.
bench="$tmp/sample-bench"
sample_short_timeout "$bench"
# The deployment being run: its compose file, project and containers.
compose_file="" project="" coord="" workers=()

# Shows the tail of every container's log of the deployment with its state
# and restarts, so a failure in CI explains itself, and keeps each
# container's whole log and the logs of the workers' pairs in $tmp.
fail() {
    echo "FAIL: e2e_compose: $*" >&2
    local c
    for c in $(podman ps -a --filter "label=io.podman.compose.project=$project" \
        --format '{{.Names}}' 2>/dev/null); do
        echo "---- $c ($(state "$c"), $(restarts "$c") restarts; whole log in $tmp/log-$c.txt)" >&2
        podman logs "$c" > "$tmp/log-$c.txt" 2>&1 || true
        tail -n 15 "$tmp/log-$c.txt" | cut -c1-300 >&2
        gateway_seen_by "$c" >&2
        podman cp "$c:/opt/streamex/.runtime/pairs/0/logs" "$tmp/pair-logs-$c" 2>/dev/null || true
    done
    exit 1
}

# The network's bridge, the run's containers' gateway and DNS server (aardvark).
bridge() { podman network inspect "${project}_default" --format '{{.NetworkInterface}}'; }

# The MAC a container's ARP entry gives its gateway, beside the bridge's: if
# they differ, the container reaches neither its gateway nor its DNS.
gateway_seen_by() {
    local pid dev
    pid=$(podman inspect --format '{{.State.Pid}}' "$1" 2>/dev/null) || return 0
    [ "${pid:-0}" -gt 0 ] || return 0
    dev=$(bridge) || dev="(unknown)"
    echo "     its neighbours: $(nsenter -t "$pid" -n ip neigh 2>/dev/null | tr '\n' ';')" \
        "bridge $dev has $(cat "/sys/class/net/$dev/address" 2>/dev/null)"
}

# Netavark before 1.9 (Debian's is 1.4) leaves a network's bridge with the
# lowest MAC among its ports, so a container joining the network can change
# it. The containers already on it keep the old MAC for their gateway, which
# is their DNS server too, until their ARP entry is refreshed: up to about
# 100 s (netavark pull request 833, which pins the bridge's MAC). A worker
# that had looked up "coordinator" before the coordinator's container joined
# could then not look it up again (libzmq's one I/O thread waits on the
# lookup): it never joined in one CI run; of 27 start-ups here, 6 joined 5 s
# late, one 30 s late and one not within 60 s. Pins the MAC as netavark 1.9
# does: then 25 start-ups of 25 had both workers in within 2 s.
pin_bridge_mac() {
    local dev
    dev=$(bridge) && ip link set dev "$dev" address "$(cat "/sys/class/net/$dev/address")" ||
        fail "cannot pin the MAC of the bridge of ${project}_default"
}

compose() {
    podman-compose --no-ansi -p "$project" -f "$compose_file" "$@" >>"$tmp/compose.log" 2>&1
}

state() { podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$1" 2>/dev/null; }
restarts() { podman inspect --format '{{.RestartCount}}' "$1" 2>/dev/null || echo 0; }

# A container of the run that keeps restarting will not get better: fail at
# once with its log instead of waiting out the deadline.
no_restart_loop() {
    local c
    for c in $(podman ps -a --filter "label=io.podman.compose.project=$project" \
        --format '{{.Names}}'); do
        [ "$(restarts "$c")" -le 3 ] || fail "$c restarted $(restarts "$c") times"
    done
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every second.
wait_until() {
    local limit=$1 what=$2 i
    shift 2
    for ((i = 0; i < limit; i++)); do
        "$@" && return 0
        ((i % 10)) || no_restart_loop
        sleep 1
    done
    fail "waited $limit s for: $what"
}

logged() { podman logs "$1" 2>&1 | grep -qE "$2"; }
exited() { [ "$(state "$1" | cut -d' ' -f1)" = exited ]; }
# A worker tries to reach the coordinator once its pair is up.
both_connecting() {
    logged "${workers[0]}" "connected to tcp://coordinator" &&
        logged "${workers[1]}" "connected to tcp://coordinator"
}
both_joined() { [ "$(podman logs "$coord" 2>&1 | grep -c "worker .* joined")" -ge 2 ]; }
# A worker's name: its container's hostname and pair index 0.
worker_name() { echo "$(podman inspect --format '{{.Config.Hostname}}' "$1")-0"; }

require_podman
at_exit '[ -z "$project" ] || compose down -v -t 5'

echo "== building the images with compose (one at a time: they share their first layers)"
build_images "$tmp" || fail "building the images"
"$SX_SOURCE_DIR/docker/make-keys.sh" "$tmp/keys" >/dev/null

# up DEPLOYMENT COMPOSE_FILE: starts the stack on the sample and waits until
# both workers joined with their pairs up. The coordinator starts last, once
# both workers have their pairs up and try to reach it: a worker whose pair
# took longer than the whole run (53 s later than the other once in a CI
# trial) would otherwise join a run that is over and fail the test, though
# the run was right.
up() {
    compose_file="$SX_SOURCE_DIR/docker/$2"
    project="$prefix-$1"
    coord="${project}_coordinator_1"
    workers=("${project}_worker_1" "${project}_worker_2")
    local port others
    port=$(free_port)
    echo "== $1: up $2 on the sample bench (project $project)"
    start=$(date +%s)
    export STREAMEX_KEYS="$tmp/keys" STREAMEX_PORT="$port" STREAMEX_WORKERS=2 \
        STREAMEX_BENCH="$bench" STREAMEX_PREDICTIONS_DIR="$bench"
    others=$(podman-compose -f "$compose_file" config --services | grep -vx coordinator) ||
        fail "cannot list the services of $compose_file"
    # shellcheck disable=SC2086 # one word per service
    compose up -d --no-build --no-deps $others || fail "compose up (see $tmp/compose.log)"
    pin_bridge_mac
    wait_until 600 "both workers to have their pairs up" both_connecting
    compose up -d --no-build --no-deps coordinator || fail "compose up (see $tmp/compose.log)"
    wait_until 120 "both workers to join" both_joined
    up_seconds=$(($(date +%s) - start))
    echo "stack up in $up_seconds s"
}

# finish: waits for the coordinator to end the run, checks the verdicts from
# the results volume on the host (in $tmp/out-DEPLOYMENT).
finish() {
    wait_until 900 "the coordinator to finish" exited "$coord"
    wall=$(($(date +%s) - start))
    [ "$(state "$coord")" = "exited 0" ] || fail "the coordinator ended $(state "$coord")"
    podman logs "$coord" 2>&1 | grep "EX =" || true
    out="$tmp/out-${project##*-}"
    mkdir "$out"
    # From the volume: podman 4.3's `cp` copies nothing out of a volume of a
    # stopped container (and says nothing).
    podman volume export "${project}_results" | tar -x -C "$out" ||
        fail "cannot export the volume ${project}_results"
    python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$out" method=predictions ||
        fail "verdicts differ from expected.jsonl (results in $out)"
}

# settled_by WORKER [MIN_ATTEMPTS]: how many results WORKER settled (with at
# least MIN_ATTEMPTS attempts).
settled_by() {
    python3 - "$out/method/results.jsonl" "$1" "${2:-0}" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(sum(1 for r in rows if r["worker"] == sys.argv[2] and r["attempts"] >= int(sys.argv[3])))
PY
}

down() {
    compose down -v -t 5 || fail "compose down (see $tmp/compose.log)"
    local left
    left="$(podman ps -a --filter "label=io.podman.compose.project=$project" --format '{{.Names}}')"
    left+="$(podman pod ps --filter "label=com.docker.compose.project=$project" --format '{{.Name}}')"
    left+="$(podman volume ls --format '{{.Name}}' | grep "^$project" || true)"
    left+="$(podman network ls --format '{{.Name}}' | grep "^$project" || true)"
    [ -z "$left" ] || fail "left after down: $left"
    project=""
}

pairs() {
    up pairs compose.yaml
    local victim=${workers[0]} survivor=${workers[1]} name other
    echo "== kill $victim after its first task"
    wait_until 600 "$victim to finish a task" logged "$victim" "task method/"
    name=$(worker_name "$victim")
    podman kill "$victim" >/dev/null
    wait_until 60 "the coordinator to declare $name dead" \
        logged "$coord" "worker $name silent .* [1-9][0-9]* shards go back"
    finish
    wait_until 30 "$survivor to exit" exited "$survivor"
    [ "$(state "$survivor")" = "exited 0" ] || fail "$survivor ended $(state "$survivor")"
    [ "$(state "$victim")" = "exited 137" ] || fail "the killed $victim came back: $(state "$victim")"
    other=$(worker_name "$survivor")
    redone=$(settled_by "$other" 2)
    [ "$redone" -ge 1 ] || fail "no task of the killed $name was redone by $other"
    down
    echo "pairs: OK (stack up in $up_seconds s, sample in $wall s from up, $redone task(s)" \
        "of the killed worker redone by the other)"
}

# What is left on the shared cluster: jobs not ended, and the sx.* topics.
running_jobs() {
    podman exec "${project}_jobmanager_1" curl -sf http://localhost:8081/jobs/overview |
        python3 -c 'import json, sys
print(sum(1 for j in json.load(sys.stdin)["jobs"] if j["state"] not in ("FINISHED", "CANCELED", "FAILED")))'
}
# The topics are the folders of the broker's log.dirs (a deleted one is
# renamed ...-delete first); the runtime's Kafka has no topic tool, and
# listing with one that is missing counted 0 whatever was left.
sx_topics() {
    local folders
    folders=$(podman exec "${project}_kafka_1" ls /var/lib/kafka) ||
        fail "cannot list the shared broker's log.dirs"
    grep '^sx\.' <<<"$folders" | grep -vc -- '-delete$' || true
}

shared() {
    up shared compose-shared.yaml
    finish
    local w n
    for w in "${workers[@]}"; do
        wait_until 30 "$w to exit" exited "$w"
        [ "$(state "$w")" = "exited 0" ] || fail "$w ended $(state "$w")"
        n=$(settled_by "$(worker_name "$w")")
        [ "$n" -ge 1 ] || fail "$w settled no task: the shared cluster did not serve both"
        ! logged "$w" "sweep: (deleted|cancelled)" || fail "$w removed what another worker made"
    done
    [ "$(running_jobs)" = 0 ] || fail "$(running_jobs) job(s) still run on the shared cluster"
    [ "$(sx_topics)" = 0 ] || fail "$(sx_topics) sx.* topic(s) left on the shared Kafka"
    down
    echo "shared: OK (stack up in $up_seconds s, sample in $wall s from up)"
}

for deployment in $deployments; do
    case "$deployment" in
    pairs | shared) "$deployment" ;;
    *) fail "unknown deployment '$deployment' in SX_COMPOSE_DEPLOYMENTS (pairs, shared)" ;;
    esac
done
echo "e2e_compose: OK ($deployments)"
