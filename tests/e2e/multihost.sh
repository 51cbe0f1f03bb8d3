#!/usr/bin/env bash
# tests/e2e/multihost.sh: the distributed run across hosts with their own
# addresses. The test builds its own little network of Linux network
# namespaces (a coordinator "host" with a bridge at 10.231.X.1 and one
# namespace per worker at .2, .3, .4, joined by veth pairs; nothing outside
# these namespaces is touched) and checks, over CURVE-secured TCP:
#   1. a run of the sample bench ends with every task ID exactly once, both
#      workers taking part, while a worker whose key is not allow-listed is
#      refused and contributes nothing;
#   2. plain TCP on a non-loopback address is refused without --insecure;
#   3. with one worker's link cut mid-run (ip link set down), its shards are
#      re-executed by the other worker, every ID is settled exactly once, and
#      when the link comes back the late worker's results, which answer no
#      current attempt, are dropped;
#   4. a worker key added to the allow folder mid-run is let in without a
#      restart of the coordinator;
#   5. at width: 16 worker hosts on a bench of 400 task IDs, the links of
#      two cut mid-run; both are declared dead, the run ends with every unit
#      exactly once, and every other host took part.
# The workers use the simulated executor (--simulate): this test exercises
# the network path; the other e2e tests prove real Kafka + Flink execution
# (two real pairs per namespace would cost ~6 GiB and minutes).
# Needs root (CI runs as root). Where network namespaces cannot be made it
# prints "SKIP: ..." and exits 77, which ctest reports as skipped; under
# CI=true that is a failure, since CI must run it.
# ctest: serial
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"

bench="$SX_SOURCE_DIR/examples/sample-bench"
preds="$bench/predictions.jsonl"
port=5555
tag="sxmh-$$"
ns_coord="$tag-coord"
hosts=($(seq -f "h%02g" 1 16))
workers=(w1 w2 intruder "${hosts[@]}")
subnet="10.231.$((RANDOM % 250 + 1))"
coord_addr="$subnet.1"
endpoint="tcp://$coord_addr:$port"
tmp=$(make_tmpdir)
namespaces=()
pids=()

# Shows the tail of every log, so a failure in CI explains itself.
fail() {
    echo "FAIL: e2e_multihost: $*" >&2
    for log in "$tmp"/*.log; do
        [ -f "$log" ] || continue
        echo "---- ${log##*/}" >&2
        tail -n 15 "$log" >&2
    done
    exit 1
}

cleanup() {
    local pid ns
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    # Deleting a namespace deletes the veth ends and the bridge inside it.
    for ns in "${namespaces[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
}
at_exit cleanup

ns_of() { echo "$tag-$1"; }

# ---- the network ------------------------------------------------------------

# Each step is chained: make_network runs as an `if` condition, where
# set -e does not stop at a failing command.
make_namespace() {
    ip netns add "$1" || return 1
    namespaces+=("$1")
    ip -n "$1" link set lo up && ip netns exec "$1" true
}

# A bridge in the coordinator's namespace, one veth pair per worker host.
make_network() {
    make_namespace "$ns_coord" &&
        ip -n "$ns_coord" link add br0 type bridge &&
        ip -n "$ns_coord" addr add "$coord_addr/24" dev br0 &&
        ip -n "$ns_coord" link set br0 up || return 1
    local host=2 name ns
    for name in "${workers[@]}"; do
        ns=$(ns_of "$name")
        make_namespace "$ns" &&
            ip -n "$ns_coord" link add "port$host" type veth peer name eth0 netns "$ns" &&
            ip -n "$ns_coord" link set "port$host" master br0 up &&
            ip -n "$ns" addr add "$subnet.$host/24" dev eth0 &&
            ip -n "$ns" link set eth0 up || return 1
        host=$((host + 1))
    done
}

[ "$(id -u)" = 0 ] || skip_unless_ci "needs root to create network namespaces (CI runs as root)"
command -v ip > /dev/null || skip_unless_ci "no 'ip' command (Debian package iproute2)"
if ! make_network 2> "$tmp/netns.err"; then
    skip_unless_ci "cannot create network namespaces, veth pairs or a bridge here: $(head -c 300 "$tmp/netns.err")"
fi
echo "== network: coordinator $coord_addr in $ns_coord; workers ${workers[*]} at $subnet.2-$((${#workers[@]} + 1))"

# ---- processes --------------------------------------------------------------

# The key layout of docker/compose.yaml, made by the same script; the
# intruder has a key pair of its own and the coordinator's public key, but
# is not in the coordinator's allow list.
keys="$tmp/keys"
"$SX_SOURCE_DIR/docker/make-keys.sh" "$keys" w1 w2 "${hosts[@]}" > /dev/null
"$STREAMEX" -q keygen intruder --dir "$keys/intruder" > /dev/null
cp "$keys/coordinator/coordinator.cert" "$keys/intruder/"

# start_coordinator RUN [OPTIONS...]: in the coordinator namespace, output
# in $tmp/RUN, log in $tmp/RUN-coord.log; sets $coord.
start_coordinator() {
    local run="$1"
    shift
    ip netns exec "$ns_coord" "$STREAMEX" coordinator --bench "$bench" \
        --method "m=$preds" --output "$tmp/$run" --bind "$endpoint" \
        --cert "$keys/coordinator/coordinator.cert" --allow "$keys/coordinator/workers" \
        --heartbeat-ms 100 --dead-after-ms 2000 "$@" \
        > "$tmp/$run-coord.out" 2> "$tmp/$run-coord.log" &
    coord=$!
    pids+=("$coord")
}

# start_worker RUN NAME DELAY_MS: in NAME's namespace, with NAME's key, one
# shard and one task at a time (run 2 needs the run still going when w1's
# link comes back: with 4 slots, w2 alone finished the sample before w1's
# resent results reached the coordinator); log in $tmp/RUN-NAME.log; sets
# $worker.
start_worker() {
    local run="$1" name="$2" delay="$3"
    ip netns exec "$(ns_of "$name")" "$STREAMEX" worker --connect "$endpoint" \
        --name "$name" --cert "$keys/$name/$name.cert" \
        --server-cert "$keys/$name/coordinator.cert" --simulate "delay_ms=$delay" \
        --capacity 1 --slots 1 --work-dir "$tmp/$run-$name" \
        --heartbeat-ms 100 --dead-after-ms 2000 2> "$tmp/$run-$name.log" &
    worker=$!
    pids+=("$worker")
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s.
wait_until() {
    local limit=$(($1 * 10)) what="$2" i
    shift 2
    for ((i = 0; i < limit; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    fail "waited ${limit}00 ms for: $what"
}

# wait_exit SECONDS PID WHAT: waits for PID to end; sets $rc.
wait_exit() {
    wait_until "$1" "$3 to exit" eval "! kill -0 $2 2>/dev/null"
    rc=0
    wait "$2" || rc=$?
}

# ---- checks -----------------------------------------------------------------

# Every ID of task_ids.txt exactly once in a JSONL file of results (or of
# journal records {"method", "result"}), in any order.
every_id_once() {
    python3 - "$bench/task_ids.txt" "$1" << 'EOF' || fail "$1: not every task ID exactly once"
import collections, json, sys
ids = [l.strip() for l in open(sys.argv[1]) if l.strip()]
seen = collections.Counter()
for line in open(sys.argv[2]):
    record = json.loads(line)
    seen[record.get("result", record)["task_id"]] += 1
twice = sorted(i for i, n in seen.items() if n > 1)
missing = sorted(set(ids) - set(seen))
extra = sorted(set(seen) - set(ids))
for what, items in (("twice", twice), ("missing", missing), ("unknown", extra)):
    if items:
        print(f"{sys.argv[2]}: {what}: {' '.join(items)}", file=sys.stderr)
sys.exit(1 if twice or missing or extra else 0)
EOF
}

# result_field FILE ID FIELD: one field of a task's line in results.jsonl.
result_field() {
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["task_id"] == sys.argv[2]:
        print(r[sys.argv[3]])' "$@"
}

# Task IDs of a worker's unacknowledged results: spool/METHOD.ID.ATTEMPT.result.
spooled_ids() {
    local f
    for f in "$1"/spool/m.*.result; do
        [ -e "$f" ] || continue
        f=${f##*/spool/m.}
        echo "${f%.*.result}"
    done
}

journaled() { grep -q "\"task_id\":\"$2\"" "$1"; }

# ---- 1. a full run, with an intruder ---------------------------------------

echo "== run 1: coordinator and two CURVE workers across namespaces; an intruder is refused"
start_coordinator full
start_worker full w1 20
w1=$worker
start_worker full w2 20
w2=$worker
start_worker full intruder 5
intruder=$worker
wait_exit 90 "$coord" "the coordinator of run 1"
[ "$rc" = 0 ] || fail "run 1: coordinator exited $rc"
every_id_once "$tmp/full/m/results.jsonl"
for name in w1 w2; do
    grep -q "\"worker\":\"$name\"" "$tmp/full/m/results.jsonl" || fail "run 1: $name settled no task"
done
wait_exit 15 "$w1" "w1 after the final goodbye"
[ "$rc" = 0 ] || fail "run 1: w1 exited $rc"
wait_exit 15 "$w2" "w2 after the final goodbye"
[ "$rc" = 0 ] || fail "run 1: w2 exited $rc"

kill -0 "$intruder" 2> /dev/null || fail "the intruder stopped by itself: was it ever tried?"
kill "$intruder"
grep -q '"worker":"intruder"' "$tmp/full/m/results.jsonl" && fail "the intruder settled tasks"
grep -q "worker intruder joined" "$tmp/full-coord.log" && fail "the intruder joined"
grep -q "connected to $endpoint" "$tmp/full-intruder.log" ||
    fail "the intruder never tried $endpoint"

# ---- 2. plain TCP off loopback ----------------------------------------------

echo "== plain TCP on $coord_addr is refused without --insecure"
if ip netns exec "$ns_coord" "$STREAMEX" coordinator --bench "$bench" --method "m=$preds" \
    --output "$tmp/plain" --bind "tcp://$coord_addr:$((port + 1))" 2> "$tmp/plain-coord.log"; then
    fail "the coordinator accepted plain TCP on $coord_addr"
fi
grep -q -- "--insecure" "$tmp/plain-coord.log" || fail "coordinator: no hint about --insecure"
if ip netns exec "$(ns_of w1)" "$STREAMEX" worker --connect "$endpoint" --simulate delay_ms=1 \
    --work-dir "$tmp/plain-w1" 2> "$tmp/plain-w1.log"; then
    fail "a worker connected with plain TCP to $coord_addr"
fi
grep -q -- "--insecure" "$tmp/plain-w1.log" || fail "worker: no hint about --insecure"

# ---- 3. a worker's link cut mid-run -----------------------------------------

echo "== run 2: w1's link goes down mid-run, comes back after w2 redid its shard"
start_coordinator cut --shard-size 2
start_worker cut w1 600
w1=$worker
start_worker cut w2 600
w2=$worker
# w1 has finished one task of its first shard and runs the next one.
wait_until 30 "w1 to finish a task" grep -qs "task m/" "$tmp/cut-w1.log"
ip -n "$(ns_of w1)" link set eth0 down
wait_until 10 "the coordinator to declare w1 dead" grep -q "worker w1 silent" "$tmp/cut-coord.log"
grep -qE "worker w1 silent .* [1-9][0-9]* shards go back" "$tmp/cut-coord.log" ||
    fail "w1 held no shard when its link went down"
# Offline, w1 finishes the task it was running and keeps the result spooled.
wait_until 10 "w1 to spool a result offline" test -n "$(spooled_ids "$tmp/cut-w1")"
late=$(spooled_ids "$tmp/cut-w1")
for id in $late; do
    wait_until 20 "$id to be settled without w1" journaled "$tmp/cut/journal.jsonl" "$id"
done
ip -n "$(ns_of w1)" link set eth0 up
echo "   link up again; w1's spooled results: $(echo $late)"
wait_exit 90 "$coord" "the coordinator of run 2"
[ "$rc" = 0 ] || fail "run 2: coordinator exited $rc"

every_id_once "$tmp/cut/m/results.jsonl"
every_id_once "$tmp/cut/journal.jsonl"
redone=0
for id in $late; do
    grep -qE "worker w1: result [a-z_]+ for m/$id \(token [0-9]+\): [a-z ]+: dropped" \
        "$tmp/cut-coord.log" ||
        fail "w1's late result for $id was not dropped as a duplicate (w1 back before the end?)"
    if [ "$(result_field "$tmp/cut/m/results.jsonl" "$id" worker)" = w2 ]; then
        [ "$(result_field "$tmp/cut/m/results.jsonl" "$id" attempts)" -ge 2 ] ||
            fail "$id settled by w2 on its first attempt, yet w1 held it"
        redone=$((redone + 1))
    fi
done
[ "$redone" -ge 1 ] || fail "none of w1's cut-off tasks ($late) was re-executed by w2"
wait_exit 15 "$w1" "w1 after the final goodbye"
[ "$rc" = 0 ] || fail "run 2: w1 exited $rc"
wait_exit 15 "$w2" "w2 after the final goodbye"
[ "$rc" = 0 ] || fail "run 2: w2 exited $rc"

# ---- 4. a key allowed at run time --------------------------------------------

echo "== run 3: a key added to the allow list lets its worker in, no restart"
start_coordinator admit
start_worker admit intruder 5
wait_until 10 "the refused worker to try" grep -q "connected to" "$tmp/admit-intruder.log"
wait_until 10 "the coordinator to refuse it" grep -q "denied (CURVE)" "$tmp/admit-coord.log"
grep -q "joined" "$tmp/admit-coord.log" && fail "run 3: a worker joined before its key was allowed"
# Renamed into place, so the coordinator never reads a half-written file.
cp "$keys/intruder/intruder.cert" "$tmp/intruder.cert"
mv "$tmp/intruder.cert" "$keys/coordinator/workers/"
wait_exit 60 "$coord" "the coordinator of run 3"
[ "$rc" = 0 ] || fail "run 3: coordinator exited $rc"
grep -q "worker intruder joined" "$tmp/admit-coord.log" || fail "run 3: the allowed worker never joined"
every_id_once "$tmp/admit/m/results.jsonl"

# ---- 5. sixteen hosts, two links cut ----------------------------------------

echo "== run 5: ${#hosts[@]} worker hosts on 400 task IDs, two links cut mid-run"
bench="$tmp/wide-bench"
preds="$bench/preds.jsonl"
python3 - "$bench" << 'EOF'
import json, os, sys
bench = sys.argv[1]
ids = ["t%03d" % i for i in range(400)]
for d in ("gold", "evaluation"):
    os.makedirs(os.path.join(bench, d), exist_ok=True)
with open(os.path.join(bench, "preds.jsonl"), "w") as preds:
    for n, tid in enumerate(ids):
        os.makedirs(os.path.join(bench, "tasks", tid, "sources"))
        with open(os.path.join(bench, "tasks", tid, "task.json"), "w") as f:
            json.dump({"task_id": tid, "timeout_s": 60}, f)
        with open(os.path.join(bench, "tasks", tid, "sources", "s.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        with open(os.path.join(bench, "gold", tid + ".csv"), "w") as f:
            f.write("x\n%d\n" % n)
        with open(os.path.join(bench, "evaluation", tid + ".json"), "w") as f:
            f.write("{}\n")
        preds.write(json.dumps({"task_id": tid, "sql": "SELECT %d" % n}) + "\n")
with open(os.path.join(bench, "task_ids.txt"), "w") as f:
    f.write("".join(i + "\n" for i in ids))
EOF
start_coordinator wide
wide_workers=()
for name in "${hosts[@]}"; do
    start_worker wide "$name" 150
    wide_workers+=("$worker")
done
cut=(h03 h11)
settled() { cat "$tmp/wide/journal.jsonl" 2> /dev/null | wc -l; }
wait_until 60 "60 units settled" eval '[ "$(settled)" -ge 60 ]'
for name in "${cut[@]}"; do ip -n "$(ns_of "$name")" link set eth0 down; done
for name in "${cut[@]}"; do
    wait_until 10 "the coordinator to declare $name dead" \
        grep -q "worker $name silent" "$tmp/wide-coord.log"
    grep -qE "worker $name silent .* [1-9][0-9]* shards go back" "$tmp/wide-coord.log" ||
        fail "run 5: $name held no shard when its link went down"
done
[ "$(settled)" -lt 400 ] ||
    fail "run 5: the run was over before the cut hosts were declared dead"
for name in "${cut[@]}"; do ip -n "$(ns_of "$name")" link set eth0 up; done
wait_exit 120 "$coord" "the coordinator of run 5"
[ "$rc" = 0 ] || fail "run 5: coordinator exited $rc"
every_id_once "$tmp/wide/m/results.jsonl"
every_id_once "$tmp/wide/journal.jsonl"
[ "$(grep -c " joined (capacity " "$tmp/wide-coord.log")" -ge "${#hosts[@]}" ] ||
    fail "run 5: not every host joined"
for i in "${!hosts[@]}"; do
    name=${hosts[$i]}
    [[ " ${cut[*]} " == *" $name "* ]] && continue
    grep -q "\"worker\":\"$name\"" "$tmp/wide/m/results.jsonl" ||
        fail "run 5: $name settled no task"
    wait_exit 15 "${wide_workers[$i]}" "$name after the final goodbye"
    [ "$rc" = 0 ] || fail "run 5: $name exited $rc"
done
wide_settled=$(settled)

# Last, so that a failure here says everything else passed: an operator must
# be able to see in the coordinator's log why a host never joined.
intruder_key=$(sed -n 's/^ *public-key = "\(.*\)"$/\1/p' "$keys/intruder/intruder.cert")
grep -iE "refused|denied" "$tmp/full-coord.log" | grep -qF -e "$subnet.4" -e "$intruder_key" ||
    fail "all else passed, but the coordinator of run 1 did not log the refusal of the" \
        "intruder (a line with 'refused' or 'denied' and $subnet.4 or its key $intruder_key)"

echo "e2e_multihost: OK ($redone task(s) of w1 redone by w2; late duplicates dropped:" \
    "$(echo $late); $wide_settled units over ${#hosts[@]} hosts, ${cut[*]} cut)"
