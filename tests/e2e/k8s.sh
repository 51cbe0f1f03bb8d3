#!/usr/bin/env bash
# tests/e2e/k8s.sh: the Helm chart docker/helm/streamex on a real single-node
# Kubernetes (scripts/k8s: built from source, started here, stopped and
# cleaned at the end however the test ends). As a user would: builds the
# images of docker/ with Podman and loads them into the cluster, makes the
# CURVE keys with docker/make-keys.sh and stores them as Secrets, gives the
# sample bench and its predictions as a volume (sb17's timeout at 30 s),
# and runs the sample:
#   coordinator  `helm install --wait` of a coordinator and two workers,
#                each with its own pair; once the first task is settled a
#                worker pod is deleted holding shards (it may finish the
#                task it is running; the others settle the rest of them),
#                and once a third of the tasks are settled the coordinator
#                pod is deleted (the Job starts another, which resumes from
#                the journal on the results volume: every task is journaled
#                exactly once); the run ends soon after, often before
#                the deleted worker's replacement pod has its pair up: it
#                never hears that the run is over, and the workers Job
#                (Indexed, a successPolicy of one succeeded index) must
#                still complete, soon after the coordinator Job, with no
#                worker pod left running;
#   shard        three shards as an Indexed Job, the pod of index 2 deleted
#                after its first task (retried within its budget, the new
#                pod resuming from the index's journal: each of its tasks
#                journaled once), then the merge Job.
# Each run: every task ID once with the status expected.jsonl gives
# (tests/e2e/sample_verdicts.py: EX 17/30), read back from the results
# claim by a pod and `kubectl cp`, as docs/kubernetes.md says; `helm
# uninstall` leaves no pod, Service or Job, and the results' claim stays. Prints install to first settled task, each run's wall time,
# the kills' outcomes and the peak memory of each kind of pod.
#   shared       (by hand) a coordinator and two workers with sharedRuntime,
#                on a Kafka broker and a Flink session cluster run in the
#                cluster from docker/cluster/run.sh; both workers settle
#                tasks, and no job runs and no topic is left on it after.
# By default (the CI form) the shard run starts in the coordinator run's
# tail, once a worker is idle, so that its pairs come up while that run
# ends (SX_K8S_OVERLAP=0: one after the other).
# SX_K8S_RUNS picks the runs (default "coordinator shard"); SX_K8S_KILLS=none
# runs them without deleting pods (a clean wall time). SX_K8S_KEEP=1 leaves
# the cluster up at the end. Needs root, Podman (scripts/setup-podman.sh)
# and the cluster's binaries (scripts/k8s/setup.sh); without them, or when
# the cluster cannot start here, it says why and exits 77 (a failure under
# CI=true). Run it under the machine-wide lock of the pairs.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
. "$SX_SOURCE_DIR/scripts/k8s/lib.sh"

runs="${SX_K8S_RUNS:-coordinator shard}"
kills="${SX_K8S_KILLS:-pods}"
sample_bench
chart="$SX_SOURCE_DIR/docker/helm/streamex"
ns="sx-e2e-$$"
tmp=$(make_tmpdir)
# The sample with sb17's timeout at 30 s (tests/kit/lib.sh sample_short_timeout).
bench="$tmp/sample-bench"
sample_short_timeout "$bench"
# The release being run, and where its results are on this host.
release="" out=""

k() { "$kubectl" -n "$ns" "$@"; }

# Says what the cluster shows, so that a failure explains itself.
fail() {
    echo "FAIL: e2e_k8s: $*" >&2
    if [ -n "$release" ]; then
        k get pods,jobs -o wide >&2 2>&1 || true
        k get events --sort-by=.lastTimestamp 2>&1 | tail -n 20 >&2 || true
        local pod
        for pod in $(k get pods -l "app.kubernetes.io/instance=$release" -o name 2>/dev/null); do
            echo "---- $pod" >&2
            k logs --tail 20 "$pod" 2>&1 | cut -c1-300 >&2 || true
        done
    fi
    exit 1
}

# Peak working-set memory of each kind of pod of the release being run,
# sampled from the kubelet's summary while the test waits.
declare -A peak_mb=()
sample_memory() {
    local line
    while read -r line; do
        local component=${line% *} mb=${line#* }
        [ "${peak_mb[$component]:-0}" -ge "$mb" ] || peak_mb[$component]=$mb
    done < <("$kubectl" get --raw "/api/v1/nodes/$(hostname)/proxy/stats/summary" 2>/dev/null |
        python3 -c '
import json, re, sys
for pod in json.load(sys.stdin).get("pods", []):
    ref, mem = pod["podRef"], pod.get("memory", {}).get("workingSetBytes", 0)
    if ref["namespace"] == sys.argv[1] and ref["name"].startswith(sys.argv[2]) and mem:
        kind = re.sub(r"-[a-z0-9]{5}$", "", ref["name"])
        kind = re.sub(r"-[0-9]+$", "", kind)
        print(kind, mem // 2**20)' "$ns" "$release-streamex-" || true)
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 2 s (sampling
# memory every 10 s) until it succeeds, or fails naming WHAT.
wait_until() {
    local limit=$1 what=$2 deadline i=0
    shift 2
    deadline=$(($(date +%s) + limit))
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || fail "waited $limit s for: $what"
        ((i++ % 5)) || sample_memory
        sleep 2
    done
}

# The settled records of a journal (0 while it does not exist).
journaled() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# Those settled by a worker (the coordinator settles missing predictions
# itself, at once).
executed() {
    if [ -f "$1" ]; then grep -c '"worker":"[^"]' "$1" || true; else echo 0; fi
}
# The worker of the first task settled by one.
first_worker() {
    python3 -c 'import json, sys
print(next(r["worker"] for r in (json.loads(l)["result"] for l in open(sys.argv[1])) if r["worker"]))' "$1"
}
at_least() { [ "$("$1" "$2")" -ge "$3" ]; }
job_condition() {
    [ "$(k get job "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}" 2>/dev/null)" = True ]
}
job_field() { k get job "$1" -o jsonpath="{.status.$2}"; }
pods_of() { k get pods -l "app.kubernetes.io/instance=$release,app.kubernetes.io/component=$1" -o name "${@:2}"; }
logged() { k logs "$1" 2>/dev/null | grep -qE "$2"; }
no_objects_left() { [ -z "$(k get pods,services,jobs -l "app.kubernetes.io/instance=$release" -o name)" ]; }

# ---- the cluster, the images, the keys -------------------------------------

[ "$(id -u)" -eq 0 ] || skip_unless_ci "needs root: kubelet, containerd and iptables"
require_podman
for binary in kube-apiserver kubelet kubectl helm; do
    [ -x "$k8s_bin/$binary" ] || skip_unless_ci "no $k8s_bin/$binary: run scripts/k8s/setup.sh"
done
[ "${SX_K8S_KEEP:-0}" = 1 ] || at_exit '"$SX_SOURCE_DIR/scripts/k8s/down.sh" >/dev/null'
echo "== the cluster (scripts/k8s/up.sh)"
start=$(date +%s)
"$SX_SOURCE_DIR/scripts/k8s/up.sh" >"$tmp/up.log" 2>&1 ||
    skip_unless_ci "the cluster cannot start here: $(grep -m 1 error "$tmp/up.log" || tail -n 1 "$tmp/up.log")"
echo "cluster up in $(($(date +%s) - start)) s"

echo "== the images (docker/compose.yaml with Podman, then into containerd)"
build_images "$tmp" || fail "building the images"
start=$(date +%s)
"$SX_SOURCE_DIR/scripts/k8s/load-images.sh" streamex-coordinator streamex-worker >"$tmp/load.log" 2>&1 ||
    fail "loading the images: $(tail -n 3 "$tmp/load.log")"
echo "images loaded into the cluster in $(($(date +%s) - start)) s"

echo "== the keys (docker/make-keys.sh) as Secrets, as the chart's README says"
k get namespace "$ns" >/dev/null 2>&1 || "$kubectl" create namespace "$ns" >/dev/null
"$SX_SOURCE_DIR/docker/make-keys.sh" "$tmp/keys" >/dev/null
k create secret generic streamex-coordinator-keys \
    --from-file="$tmp/keys/coordinator/coordinator.cert" \
    --from-file="$tmp/keys/coordinator/coordinator.cert_secret" >/dev/null
k create secret generic streamex-allowed-workers --from-file="$tmp/keys/coordinator/workers/" >/dev/null
k create secret generic streamex-worker-keys --from-file="$tmp/keys/worker/" >/dev/null

# The values of every install: the images as loaded, the sample bench and
# predictions from a hostPath volume, results on a PersistentVolume made
# here (a bare cluster has no storage provisioner).
cat >"$tmp/values.yaml" <<EOF
image:
  worker: localhost/streamex-worker:latest
  coordinator: localhost/streamex-coordinator:latest
  pullPolicy: Never
bench:
  volume: {hostPath: {path: $bench, type: Directory}}
predictions:
  volume: {hostPath: {path: $bench, type: Directory}}
methods:
  - {name: method, file: predictions.jsonl}
results:
  storageClassName: "-"
EOF

# install RELEASE [HELM OPTIONS...]: a results volume for RELEASE's claim
# (a hostPath folder of $tmp, writable by the chart's user), then
# `helm install --wait`.
install() {
    release=$1
    shift
    local pv="$tmp/pv-$release"
    mkdir -p "$pv"
    chown 10001:10001 "$pv"
    "$kubectl" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-$release}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: $ns, name: $release-streamex-results}
  hostPath: {path: $pv, type: Directory}
EOF
    out="$pv/$release"
    installed=$(date +%s)
    "$helm" install "$release" "$chart" -n "$ns" -f "$tmp/values.yaml" "$@" \
        --wait --timeout 10m >"$tmp/helm-$release.log" 2>&1 ||
        fail "helm install $release: $(tail -n 3 "$tmp/helm-$release.log")"
    echo "helm install --wait returned after $(($(date +%s) - installed)) s"
}

# uninstall: `helm uninstall` leaves no pod, Service or Job of the release;
# its results claim stays, bound.
uninstall() {
    "$helm" uninstall "$release" -n "$ns" --wait --timeout 5m >/dev/null ||
        fail "helm uninstall $release"
    wait_until 120 "no pod, Service or Job of $release left" no_objects_left
    [ "$(k get pvc "$release-streamex-results" -o jsonpath='{.status.phase}')" = Bound ] ||
        fail "the results claim of $release did not survive helm uninstall"
    release=""
}

# workers_complete DELETED: the workers Job completes within 120 s of the coordinator Job, by its
# success policy (the first worker told that the run is over exits 0), with
# no worker pod left: a pod that replaced a deleted one and was still
# starting its pair when the run ended never hears of it and is ended by
# Kubernetes, counted neither failed nor succeeded. The Job counts failed
# the DELETED worker pods (its argument), no other. Sets workers_after (s between the
# two Jobs' completion times) and workers_by_kubernetes (indexes whose pod
# the policy ended: the Job's succeeded count is of indexes).
workers_after=0 workers_by_kubernetes=0
workers_complete() {
    local job="$release-streamex-workers" coordinator="$release-streamex-coordinator" reason left
    wait_until 120 "the workers Job to complete after the coordinator Job" job_condition "$job" Complete
    reason=$(k get job "$job" -o jsonpath='{.status.conditions[?(@.type=="Complete")].reason}')
    [ "$reason" = SuccessPolicy ] || fail "the workers Job completed by '$reason', not SuccessPolicy"
    left=$(pods_of worker --field-selector=status.phase!=Succeeded,status.phase!=Failed)
    [ -z "$left" ] || fail "worker pods not ended once the workers Job completed: $left"
    workers_after=$(python3 -c 'import sys
from datetime import datetime
t = [datetime.fromisoformat(a.replace("Z", "+00:00")) for a in sys.argv[1:]]
print(int((t[0] - t[1]).total_seconds()))' "$(job_field "$job" completionTime)" "$(job_field "$coordinator" completionTime)")
    local failed deleted=$1
    failed=$(job_field "$job" failed)
    [ "${failed:-0}" = "$deleted" ] || fail "the workers Job counts ${failed:-0} failed pods, not $deleted"
    workers_by_kubernetes=$(($(k get job "$job" -o jsonpath='{.spec.completions}') - $(job_field "$job" succeeded)))
}

pod_ready() { [ "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].ready}' 2>/dev/null)" = true ]; }

# OUT read back as docs/kubernetes.md tells a user to: a pod that mounts
# the results claim, and kubectl cp; then the sample's verdicts, checked on
# that copy (out then names it).
check_verdicts() {
    local reader="sx-results-$release"
    k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $reader}
spec:
  securityContext: {runAsUser: 10001, runAsGroup: 10001, runAsNonRoot: true}
  containers:
    - name: read
      image: localhost/streamex-coordinator:latest
      imagePullPolicy: Never
      command: [sleep, "600"]
      volumeMounts: [{name: results, mountPath: /results, readOnly: true}]
  volumes:
    - name: results
      persistentVolumeClaim: {claimName: $release-streamex-results}
EOF
    wait_until 120 "the pod that reads the results" pod_ready "$reader"
    k cp "$reader:/results/$release" "$tmp/read-$release" >/dev/null 2>&1 ||
        fail "kubectl cp $reader:/results/$release"
    k delete pod "$reader" --wait=false >/dev/null
    out="$tmp/read-$release"
    python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$out" method=predictions ||
        fail "verdicts differ from expected.jsonl (results read back in $out)"
}

# Every task journaled exactly once in JOURNAL (with SHARD: every task of
# shard SHARD of 3): settled once, however many coordinators or pods ran.
journaled_once() {
    python3 - "$1" "$bench/task_ids.txt" "${2:-}" <<'PY' || fail "a task was not journaled exactly once in $1"
import collections, json, sys
counts = collections.Counter(json.loads(line)["result"]["task_id"] for line in open(sys.argv[1]))
ids = open(sys.argv[2]).read().split()
if sys.argv[3]:
    ids = ids[int(sys.argv[3])::3]
bad = {i: counts[i] for i in ids if counts[i] != 1}
if bad or set(counts) - set(ids):
    sys.exit("journal records per task not 1: %s, others: %s" % (bad, set(counts) - set(ids)))
PY
}

# How many tasks WORKER settled in JOURNAL.
settled_in() { grep -c "\"worker\":\"$2\"" "$1" || true; }

# Whether WORKER holds shards in the coordinator POD's last progress line;
# sets held to how many.
held=0
holds_shards() {
    held=$(k logs "$1" 2>/dev/null | grep '^{"done"' | tail -n 1 | python3 -c '
import json, sys
line = sys.stdin.read()
print(sum(w["shards"] for w in json.loads(line)["workers"] if w["name"] == sys.argv[1]) if line else 0)' "$2")
    [ "$held" -gt 0 ]
}

# ---- coordinator mode ------------------------------------------------------

coordinator() {
    echo "== coordinator mode: a coordinator and two workers, each with its own pair"
    install sx
    local journal="$out/journal.jsonl" first coord victim name settled
    wait_until 900 "the first task settled by a worker" at_least executed "$journal" 1
    first=$(($(date +%s) - installed))
    echo "install to first settled task: $first s"
    coord=$(pods_of coordinator --field-selector=status.phase=Running | head -n 1)
    # The policy lets exactly the worker pods in, to the coordinator only.
    [ "$(k get networkpolicy sx-streamex-coordinator \
        -o jsonpath='{.spec.ingress[0].from[0].podSelector.matchLabels.app\.kubernetes\.io/component}')" = worker ] ||
        fail "the coordinator's NetworkPolicy does not admit the worker pods"
    if [ "$kills" = pods ]; then
        # The worker that settled the first task, once the coordinator's
        # progress line shows it holding shards it has not finished.
        name=$(first_worker "$journal")
        victim="pod/$name" # the chart names each worker after its pod
        wait_until 120 "$name to hold a shard" holds_shards "$coord" "$name"
        before=$(settled_in "$journal" "$name")
        echo "== delete $victim (worker $name, holding $held shard(s), $before task(s) settled)" \
            "$(($(date +%s) - installed)) s after install"
        k delete "$victim" --wait=false >/dev/null
        wait_until 120 "the coordinator to take back the shards of $name" \
            logged "$coord" "worker $name (left|silent)"
        wait_until 300 "a third of the tasks settled" at_least journaled "$journal" 10
        settled=$(journaled "$journal")
        echo "== delete the coordinator $coord ($settled of $total settled)" \
            "$(($(date +%s) - installed)) s after install"
        k delete "$coord" --wait=false >/dev/null
        wait_until 300 "a new coordinator pod resuming the journal" resumed "$coord" \
            "app.kubernetes.io/instance=$release,app.kubernetes.io/component=coordinator"
        echo "the new coordinator pod resumed the journal: $resumed_with"
    fi
    wait_until 1200 "the coordinator Job to complete" job_condition sx-streamex-coordinator Complete
    wall=$(($(date +%s) - installed))
    workers_complete "$([ "$kills" = pods ] && echo 1 || echo 0)"
    check_verdicts
    journal="$out/journal.jsonl"
    journaled_once "$journal"
    local outcome="no pod deleted"
    if [ "$kills" = pods ]; then
        # What the deleted worker held went to the others: told to stop, it
        # may still finish the task it was running (within its grace
        # period), no other; every task was settled once.
        local after
        after=$(settled_in "$journal" "$name")
        [ "$after" -le $((before + 1)) ] ||
            fail "the deleted worker $name settled $after tasks, $before before its deletion: more than the one it ran"
        [ "$(job_field sx-streamex-coordinator failed)/$(job_field sx-streamex-coordinator succeeded)" = 1/1 ] ||
            fail "coordinator Job: $(job_field sx-streamex-coordinator failed) failed and $(job_field sx-streamex-coordinator succeeded) succeeded pods, not 1 and 1"
        outcome="worker $name deleted holding $held shard(s): it finished $((after - before)) task(s)"
        outcome+=" in its grace period, the others settled the rest of its shards;"
        outcome+=" coordinator deleted at $settled/$total settled: the next pod resumed $resumed_with;"
        outcome+=" every task journaled once"
    fi
    outcome+="; the workers Job complete $workers_after s after the coordinator Job,"
    outcome+=" $workers_by_kubernetes worker pod(s) ended by its success policy"
    uninstall
    echo "coordinator: OK (first settled task $first s after install, sample in $wall s; $outcome)"
}

# A pod other than OLD among those of SELECTOR that said how many tasks it
# resumed (the coordinator's, or a shard's own run).
resumed_with=""
resumed() {
    local pod
    for pod in $(k get pods -l "$2" -o name); do
        [ "$pod" != "$1" ] || continue
        resumed_with=$(k logs "$pod" 2>/dev/null | grep -oE '\([1-9][0-9]* already settled\)') || continue
        return 0
    done
    return 1
}

# ---- shard mode -------------------------------------------------------------

shard() {
    echo "== shard mode: three shards on a pair each, then the merge"
    install sxs --set mode=shard
    # Index 2: index 1 holds the sample's longest task (sb17, into its timeout),
    # so the retry of 2 runs beside it rather than after it.
    local journal="$out/shards/2/journal.jsonl" pod selector
    selector="app.kubernetes.io/instance=$release,batch.kubernetes.io/job-completion-index=2"
    if [ "$kills" = pods ]; then
        wait_until 900 "shard 2's first task settled by its worker" at_least executed "$journal" 1
        pod=$(k get pods -l "$selector" -o name)
        echo "== delete $pod (shard index 2, $(journaled "$journal") task(s) settled)" \
            "$(($(date +%s) - installed)) s after install"
        k delete "$pod" --wait=false >/dev/null
        wait_until 300 "a new pod of index 2 resuming its journal" resumed "$pod" "$selector"
        echo "the new pod of index 2 resumed its journal: $resumed_with"
    fi
    wait_until 1500 "the merge Job to complete" job_condition sxs-streamex-merge Complete
    wall=$(($(date +%s) - installed))
    check_verdicts
    [ "$(job_field sxs-streamex-shards completedIndexes)" = 0-2 ] ||
        fail "the shards Job completed indexes '$(job_field sxs-streamex-shards completedIndexes)', not 0-2"
    local outcome="no pod deleted"
    if [ "$kills" = pods ]; then
        [ "$(job_field sxs-streamex-shards failed)" = 1 ] ||
            fail "the shards Job counts '$(job_field sxs-streamex-shards failed)' failed pods, not 1"
        [ -z "$(job_field sxs-streamex-shards failedIndexes)" ] || fail "an index failed for good"
        journaled_once "$out/shards/2/journal.jsonl" 2
        outcome="index 2's pod deleted: retried once, the new pod resumed $resumed_with, every task of the shard journaled once"
    fi
    uninstall
    echo "shard: OK (sample in $wall s from install to merged; $outcome)"
}

# ---- shared runtime (by hand: SX_K8S_RUNS=shared) ---------------------------

# A Kafka broker and a Flink session cluster (JobManager, a TaskManager,
# the SQL Gateway) standing in for one a team already runs: pods of the
# worker image running docker/cluster/run.sh, as docker/compose-shared.yaml
# does. Without DNS, each pod resolves the names of docker/cluster's
# configuration (kafka, jobmanager, gateway) to their Services' addresses:
# aliases holds those entries as JSON, for the chart's hostAliases too.
aliases=""
shared_cluster() {
    local role svc
    k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: kafka}
spec: {selector: {sx-shared: kafka}, ports: [{name: kafka, port: 9092}]}
---
apiVersion: v1
kind: Service
metadata: {name: jobmanager}
spec:
  selector: {sx-shared: jobmanager}
  ports: [{name: rest, port: 8081}, {name: rpc, port: 6123}, {name: blob, port: 6124}]
---
apiVersion: v1
kind: Service
metadata: {name: gateway}
spec: {selector: {sx-shared: gateway}, ports: [{name: rest, port: 8083}]}
EOF
    for svc in kafka jobmanager gateway; do
        aliases+="{\"ip\": \"$(k get service "$svc" -o jsonpath='{.spec.clusterIP}')\", \"hostnames\": [\"$svc\"]}, "
    done
    aliases="[${aliases%, }]"
    for role in kafka jobmanager taskmanager gateway; do
        k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: sx-$role, labels: {sx-shared: $role}}
spec:
  hostAliases: $aliases
  containers:
    - name: $role
      image: localhost/streamex-worker:latest
      imagePullPolicy: Never
      command: [/opt/streamex/docker/cluster/run.sh, $role]
      resources: {requests: {cpu: 100m, memory: 1Gi}, limits: {memory: 2Gi}}
EOF
    done
}

# Flink jobs not ended, then sx.* topics not deleted (a topic's folder in
# the broker's log.dirs; a deleted one is renamed ...-delete first: the
# runtime's Kafka has no topic tool), on the shared cluster, "JOBS/TOPICS".
shared_leftovers() {
    local jobs folders
    jobs=$(k exec sx-jobmanager -- curl -sf http://localhost:8081/jobs/overview) ||
        fail "cannot read the shared JobManager's jobs"
    folders=$(k exec sx-kafka -- ls /var/lib/kafka) || fail "cannot list the shared broker's log.dirs"
    echo "$(python3 -c 'import json, sys
print(sum(1 for j in json.load(sys.stdin)["jobs"] if j["state"] not in ("FINISHED", "CANCELED", "FAILED")))' <<<"$jobs")/$(
        grep '^sx\.' <<<"$folders" | grep -vc -- '-delete$' || true)"
}

shared() {
    echo "== shared runtime: two workers on one Kafka and Flink session cluster"
    local workers
    shared_cluster
    install sxr --set sharedRuntime.enabled=true --set sharedRuntime.kafkaBootstrap=kafka:9092 \
        --set sharedRuntime.flinkGateway=http://gateway:8083 \
        --set sharedRuntime.flinkRest=http://jobmanager:8081 --set-json "hostAliases=$aliases"
    wait_until 900 "the first task settled by a worker" at_least executed "$out/journal.jsonl" 1
    echo "install to first settled task: $(($(date +%s) - installed)) s"
    wait_until 1200 "the coordinator Job to complete" job_condition sxr-streamex-coordinator Complete
    wall=$(($(date +%s) - installed))
    workers_complete 0
    check_verdicts
    workers=$(python3 -c 'import json, sys
print(len({json.loads(l)["worker"] for l in open(sys.argv[1])} - {""}))' "$out/method/results.jsonl")
    [ "$workers" = 2 ] || fail "$workers worker(s) settled tasks on the shared cluster, not 2"
    local left
    left=$(shared_leftovers)
    [ "$left" = 0/0 ] || fail "left on the shared cluster (running jobs/sx.* topics): $left"
    uninstall
    k delete pods,services -l sx-shared --wait=false >/dev/null
    k delete services kafka jobmanager gateway --wait=false >/dev/null
    echo "shared: OK (sample in $wall s from install, both workers on one broker and session cluster, nothing left on it)"
}

# What down.sh must leave: no process of the cluster, no mount, folder,
# bridge, pod network namespace or iptables rule of it.
cluster_traces() {
    local p
    for p in /proc/[0-9]*/cmdline; do
        tr '\0' ' ' 2>/dev/null <"$p" | grep -qE -- "$k8s_run|$k8s_bin" && echo "process ${p//[^0-9]/}"
    done
    [ ! -e "$k8s_run" ] || echo "folder $k8s_run"
    grep -F " $k8s_run" /proc/self/mountinfo | awk '{ print "mount " $5 }'
    ! ip link show sxk8s0 >/dev/null 2>&1 || echo "bridge sxk8s0"
    iptables-save | grep -E -- '^:KUBE-|name: \\"sx-k8s\\"' | sed 's/^/iptables /'
    ip -all netns exec ip -4 -o addr show 2>/dev/null | grep -F " 10.244.0." | sed 's/^/netns /'
    true
}

# run NAME: one run, then the peak memory of its release's pods.
run() {
    case "$1" in
    coordinator | shard | shared) "$1" ;;
    *) fail "unknown run '$1' in SX_K8S_RUNS (coordinator, shard, shared)" ;;
    esac
    local component
    for component in "${!peak_mb[@]}"; do
        echo "peak memory: $component ${peak_mb[$component]} MiB"
    done | sort
    peak_mb=()
}

# The coordinator run's tail, as its progress line says: two thirds of the
# tasks settled, every task handed out and a worker idle (the other runs the
# last ones, often sb17 running into its timeout); or the run over.
coordinator_tail() {
    job_condition sx-streamex-coordinator Complete && return 0
    k logs -l app.kubernetes.io/instance=sx,app.kubernetes.io/component=coordinator --tail 5 2>/dev/null |
        grep '^{"done"' | tail -n 1 | python3 -c '
import json, sys
line = sys.stdin.read()
progress = json.loads(line) if line else {"done": 0, "workers": []}
sys.exit(0 if progress["done"] >= 20 and any(w["state"] == "idle" for w in progress["workers"]) else 1)'
}

if [ "$runs" = "coordinator shard" ] && [ "${SX_K8S_OVERLAP:-1}" = 1 ]; then
    # The CI form: the shard run starts in the coordinator run's tail, so
    # that its pairs come up while that run ends; each run in a subshell of
    # its own (its own release, results and figures).
    run coordinator &
    first=$!
    kill_at_exit "$first"
    (wait_until 1200 "the coordinator run's tail" coordinator_tail &&
        echo "== the shard run starts in the coordinator run's tail" && run shard) &
    second=$!
    kill_at_exit "$second"
    wait "$first" || fail "the coordinator run failed (above)"
    wait "$second" || fail "the shard run failed (above)"
else
    for name in $runs; do run "$name"; done
fi
if [ "${SX_K8S_KEEP:-0}" != 1 ]; then
    echo "== scripts/k8s/down.sh leaves nothing of the cluster"
    "$SX_SOURCE_DIR/scripts/k8s/down.sh" >/dev/null || fail "scripts/k8s/down.sh failed"
    left=$(cluster_traces)
    [ -z "$left" ] || fail "left after down.sh: $left"
fi
echo "e2e_k8s: OK ($runs)"
