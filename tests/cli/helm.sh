#!/usr/bin/env bash
# tests/cli/helm.sh: the Helm chart docker/helm/streamex checked without a
# cluster, with the tools scripts/k8s/setup.sh installs in .k8s/:
#   - `helm lint --strict` in each of the three ways to run it;
#   - each rendered by `helm template` and validated by
#     `kubernetes-validate --strict` against Kubernetes 1.33 (offline);
#   - what the rendering must hold: the coordinator Job resumes and fails
#     at once on exit 2 and 3, the workers an Indexed Job that the first
#     worker done (exit 0: the run is over) completes, each named after its
#     pod, connecting through the Service's
#     variables with their keys from a Secret, the shard Job is Indexed
#     with its per-index retry budget, every pod non-root with a read-only
#     root filesystem and resources, no Secret in the chart, the results
#     claim kept on uninstall, the NetworkPolicy's selectors matching the
#     pods;
#   - values.schema.json refusing bad values, naming them;
#   - files/shard.sh running streamex run with the shard's options, passing a
#     deleted pod's TERM on (it is PID 1) and taking exit 3 for done;
#   - `checkov` on the three renderings: every finding is one the chart's
#     README justifies, and every justification still matches a finding.
# Without the tools it says so and exits 77 (a failure under CI=true).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"
. "$SX_SOURCE_DIR/scripts/k8s/lib.sh"

chart="$SX_SOURCE_DIR/docker/helm/streamex"
venv="$k8s_home/venv"
[ -x "$helm" ] || skip_unless_ci "no $helm: run scripts/k8s/setup.sh chart-tools"
for tool in kubernetes-validate checkov; do
    [ -x "$venv/bin/$tool" ] || skip_unless_ci "no $venv/bin/$tool: run scripts/k8s/setup.sh chart-tools"
done
tmp=$(make_tmpdir)
python="$venv/bin/python"

# The three ways to run, as `helm template` options.
declare -A modes=(
    [coordinator]=""
    [shard]="--set mode=shard"
    [shared]="--set sharedRuntime.enabled=true --set sharedRuntime.kafkaBootstrap=kafka:9092
              --set sharedRuntime.flinkGateway=http://gateway:8083
              --set sharedRuntime.flinkRest=http://jobmanager:8081
              --set hostAliases[0].ip=10.96.0.20 --set hostAliases[0].hostnames={kafka}"
)

echo "== helm lint --strict, helm template, kubernetes-validate --strict -k 1.33.0"
for mode in coordinator shard shared; do
    # shellcheck disable=SC2086 # the options' words
    "$helm" lint --strict "$chart" ${modes[$mode]} >"$tmp/lint-$mode.log" 2>&1 ||
        fail "helm lint $mode: $(cat "$tmp/lint-$mode.log")"
    # shellcheck disable=SC2086
    "$helm" template sx "$chart" --namespace sx ${modes[$mode]} >"$tmp/$mode.yaml" 2>"$tmp/template-$mode.log" ||
        fail "helm template $mode: $(cat "$tmp/template-$mode.log")"
    "$venv/bin/kubernetes-validate" --strict -k 1.33.0 --quiet "$tmp/$mode.yaml" >"$tmp/validate-$mode.log" 2>&1 ||
        fail "kubernetes-validate $mode: $(cat "$tmp/validate-$mode.log")"
done

echo "== what each rendering holds"
"$python" - "$tmp" <<'PY' || fail "a rendering does not hold what it must (above)"
import sys, yaml

tmp = sys.argv[1]
problems = []

def check(what, got, want):
    if got != want:
        problems.append("%s: %r, expected %r" % (what, got, want))

def load(mode):
    objs = [o for o in yaml.safe_load_all(open("%s/%s.yaml" % (tmp, mode))) if o]
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}

def pod(job):
    return job["spec"]["template"]["spec"]

def container(job):
    (c,) = pod(job)["containers"]
    return c

def labels(job):
    return job["spec"]["template"]["metadata"]["labels"]

def selects(selector, lbls):
    return all(lbls.get(k) == v for k, v in selector.items())

for mode in ("coordinator", "shard", "shared"):
    objs = load(mode)
    kinds = sorted(k for k, _ in objs)
    check("%s: no Secret in the chart" % mode, "Secret" in kinds, False)
    check("%s: objects in the release's namespace" % mode,
          {o["metadata"].get("namespace") for o in objs.values()}, {"sx"})
    pvc = objs[("PersistentVolumeClaim", "sx-streamex-results")]
    check("%s: results claim kept on uninstall" % mode,
          pvc["metadata"]["annotations"].get("helm.sh/resource-policy"), "keep")
    for (kind, name), o in objs.items():
        if kind != "Job":
            continue
        p, c = pod(o), container(o)
        check("%s %s: restartPolicy" % (mode, name), p["restartPolicy"], "Never")
        check("%s %s: runAsNonRoot" % (mode, name), p["securityContext"]["runAsNonRoot"], True)
        check("%s %s: runAsUser" % (mode, name), p["securityContext"]["runAsUser"], 10001)
        check("%s %s: readOnlyRootFilesystem" % (mode, name),
              c["securityContext"]["readOnlyRootFilesystem"], True)
        check("%s %s: capabilities" % (mode, name), c["securityContext"]["capabilities"], {"drop": ["ALL"]})
        check("%s %s: memory request and limit" % (mode, name),
              sorted(k for k in ("requests", "limits") if "memory" in c["resources"].get(k, {})),
              ["limits", "requests"])
        check("%s %s: service account token" % (mode, name), p["automountServiceAccountToken"],
              name == "sx-streamex-merge")
        mounts = {m["mountPath"] for m in c["volumeMounts"]}
        if c["image"].startswith("streamex-worker"):
            check("%s %s: writable folders of a pair" % (mode, name),
                  {"/tmp", "/var/lib/streamex", "/opt/streamex/.runtime/pairs"} <= mounts, True)
            check("%s %s: readiness is the pair's status" % (mode, name),
                  c["readinessProbe"]["exec"]["command"][:3], ["streamex", "runtime", "status"])
    if mode == "shard":
        job = objs[("Job", "sx-streamex-shards")]
        spec = job["spec"]
        check("shard: Indexed", spec["completionMode"], "Indexed")
        check("shard: completions, parallelism", (spec["completions"], spec["parallelism"]), (3, 3))
        check("shard: backoffLimitPerIndex", spec["backoffLimitPerIndex"], 1)
        check("shard: command", container(job)["command"], ["/scripts/shard.sh"])
        env = {e["name"]: e for e in container(job)["env"]}
        check("shard: index from the Job", env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"],
              "metadata.annotations['batch.kubernetes.io/job-completion-index']")
        check("shard: OUT", env["OUT"]["value"], "/results/sx")
        role = objs[("Role", "sx-streamex-merge")]
        check("shard: the merge may get the shards Job only", role["rules"],
              [{"apiGroups": ["batch"], "resources": ["jobs"],
                "resourceNames": ["sx-streamex-shards"], "verbs": ["get"]}])
        check("shard: no coordinator", ("Job", "sx-streamex-coordinator") in objs, False)
        continue
    coord, workers = objs[("Job", "sx-streamex-coordinator")], objs[("Job", "sx-streamex-workers")]
    args = container(coord)["args"]
    check("%s: coordinator resumes" % mode, "--resume" in args, True)
    check("%s: coordinator output" % mode, args[args.index("--output") + 1], "/results/sx")
    check("%s: coordinator fails at once on" % mode,
          coord["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"], [2, 3])
    wspec = workers["spec"]
    check("%s: workers Indexed, one completion per pod" % mode,
          (wspec["completionMode"], wspec["completions"], wspec["parallelism"]), ("Indexed", 2, 2))
    check("%s: the first worker done ends the workers Job" % mode, wspec["successPolicy"],
          {"rules": [{"succeededCount": 1}]})
    check("%s: workers Job fails at once on" % mode,
          wspec["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"], [2])
    wargs = container(workers)["args"]
    wenv = {e["name"]: e for e in container(workers)["env"]}
    check("%s: a worker is named after its pod" % mode,
          (wargs[wargs.index("--name") + 1], wenv["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"]),
          ("$(POD_NAME)", "metadata.name"))
    check("%s: workers connect through the Service's variables" % mode,
          wargs[wargs.index("--connect") + 1],
          "tcp://$(SX_STREAMEX_COORDINATOR_SERVICE_HOST):$(SX_STREAMEX_COORDINATOR_SERVICE_PORT)")
    check("%s: worker keys from a Secret" % mode,
          [v["secret"]["secretName"] for v in pod(workers)["volumes"] if "secret" in v],
          ["streamex-worker-keys"])
    svc = objs[("Service", "sx-streamex-coordinator")]
    check("%s: the Service selects the coordinator" % mode,
          selects(svc["spec"]["selector"], labels(coord)), True)
    check("%s: the Service selects no worker" % mode, selects(svc["spec"]["selector"], labels(workers)), False)
    policy = objs[("NetworkPolicy", "sx-streamex-coordinator")]["spec"]
    peer = policy["ingress"][0]["from"][0]["podSelector"]["matchLabels"]
    check("%s: policy applies to the coordinator" % mode,
          selects(policy["podSelector"]["matchLabels"], labels(coord)), True)
    check("%s: policy admits the workers" % mode, selects(peer, labels(workers)), True)
    check("%s: policy admits no other pod" % mode, selects(peer, labels(coord)), False)
    check("%s: policy port" % mode, policy["ingress"][0]["ports"], [{"port": 5555, "protocol": "TCP"}])
    deny = objs[("NetworkPolicy", "sx-streamex-deny-ingress")]["spec"]
    check("%s: every pod denies other ingress" % mode,
          (deny.get("ingress"), deny["policyTypes"],
           all(selects(deny["podSelector"]["matchLabels"], labels(j)) for j in (coord, workers))),
          (None, ["Ingress"], True))
    shared = mode == "shared"
    check("%s: workers on the shared runtime" % mode,
          [wargs[wargs.index(o) + 1] if o in wargs else None
           for o in ("--kafka-bootstrap", "--flink-gateway", "--flink-rest")],
          ["kafka:9092", "http://gateway:8083", "http://jobmanager:8081"] if shared else [None] * 3)
    check("%s: host aliases" % mode, pod(workers).get("hostAliases"),
          [{"ip": "10.96.0.20", "hostnames": ["kafka"]}] if shared else None)
    check("%s: worker memory limit" % mode, container(workers)["resources"]["limits"]["memory"],
          "1Gi" if shared else "4Gi")

for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY

echo "== values.schema.json refuses bad values, naming them"
# refused OPTIONS... -- TEXT: helm template with OPTIONS fails, saying TEXT.
refused() {
    local opts=() want
    while [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    want=$2
    if "$helm" template sx "$chart" "${opts[@]}" >"$tmp/refused.log" 2>&1; then
        fail "helm template ${opts[*]} was accepted"
    fi
    grep -qF -- "$want" "$tmp/refused.log" ||
        fail "helm template ${opts[*]} did not say '$want': $(cat "$tmp/refused.log")"
}
refused --set mode=batch -- "at '/mode'"
refused --set sharedRuntime.enabled=true -- "at '/sharedRuntime/kafkaBootstrap'"
refused --set mode=shard --set sharedRuntime.enabled=true --set sharedRuntime.kafkaBootstrap=k:9092 \
    --set sharedRuntime.flinkGateway=http://g:8083 --set sharedRuntime.flinkRest=http://r:8081 \
    -- "at '/sharedRuntime/enabled'"
refused --set 'methods[0].name=shards' --set 'methods[0].file=p.jsonl' -- "at '/methods/0/name'"
refused --set workers.count=0 -- "at '/workers/count'"
refused --set keys.workerSecret=Bad_Name -- "at '/keys/workerSecret'"
refused --set workers.resources.limits.memory=lots -- "at '/workers/resources/limits/memory'"
refused --set nosuchvalue=1 -- "nosuchvalue"
refused --set bench.volume.hostPath.path=/b -- "bench.volume is set but predictions.volume is not"
refused --set predictions.volume.hostPath.path=/p -- "predictions.volume is set but bench.volume is not"

echo "== files/shard.sh: streamex run's options, TERM passed on, exit 3 a complete shard"
# A stand-in streamex: records its options, exits 1 on TERM (as streamex
# does once a run has settled something), or exits with $FAKE_EXIT.
mkdir -p "$tmp/fake"
cat >"$tmp/fake/streamex" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >"$FAKE_DIR/args"
[ -z "${FAKE_EXIT:-}" ] || exit "$FAKE_EXIT"
trap 'echo term >"$FAKE_DIR/signalled"; exit 1' TERM
echo $$ >"$FAKE_DIR/started"
for ((i = 0; i < 300; i++)); do sleep 0.1; done
exit 9
FAKE
chmod +x "$tmp/fake/streamex"
# shard.sh as the Job runs it for index 1 of 3.
shard=(env PATH="$tmp/fake:$PATH" FAKE_DIR="$tmp/fake" JOB_COMPLETION_INDEX=1 SHARDS=3 OUT=/results/sx
    bash "$chart/files/shard.sh" --bench /bench)
FAKE_EXIT=3 "${shard[@]}" || fail "shard.sh exited $? for a complete shard with infra_error tasks (exit 3), not 0"
[ "$(cat "$tmp/fake/args")" = "run --bench /bench --shard 1/3 --output /results/sx/shards/1 --workers 1 --resume" ] ||
    fail "shard.sh ran streamex $(cat "$tmp/fake/args")"
FAKE_EXIT=2 "${shard[@]}" && fail "shard.sh exited 0 when streamex exited 2"
[ "$?" = 2 ] || fail "shard.sh did not exit with streamex's 2"
"${shard[@]}" &
pid=$!
for ((i = 0; i < 100; i++)); do
    [ -e "$tmp/fake/started" ] && break
    sleep 0.1
done
[ -e "$tmp/fake/started" ] || fail "shard.sh did not start streamex within 10 s"
kill_at_exit "$(cat "$tmp/fake/started")"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$(cat "$tmp/fake/signalled" 2>/dev/null)" = term ] || fail "shard.sh did not pass TERM on to streamex"
[ "$rc" = 1 ] || fail "shard.sh exited $rc after TERM, not streamex's 1"

echo "== checkov: every finding justified in the chart's README"
# The README's table of accepted findings: | CKV_... | resource kinds | why |
justified=$(grep -oE '^\| `CKV2?_K8S_[0-9]+`' "$chart/README.md" | tr -d '|` ' | sort -u) || true
[ -n "$justified" ] || fail "no table of checkov findings in $chart/README.md"
"$venv/bin/checkov" --quiet --compact --skip-download --framework kubernetes --output json \
    -f "$tmp/coordinator.yaml" -f "$tmp/shard.yaml" -f "$tmp/shared.yaml" >"$tmp/checkov.json" 2>"$tmp/checkov.log" || true
found=$("$python" - "$tmp/checkov.json" <<'PY'
import json, sys
reports = json.load(open(sys.argv[1]))
if isinstance(reports, dict):
    reports = [reports]
ids = {c["check_id"] for r in reports for c in r.get("results", {}).get("failed_checks", [])}
print("\n".join(sorted(ids)))
PY
) || fail "checkov gave no report: $(tail -n 5 "$tmp/checkov.log")"
unjustified=$(comm -23 <(echo "$found") <(echo "$justified"))
stale=$(comm -13 <(echo "$found") <(echo "$justified"))
[ -z "$unjustified" ] || fail "checkov findings the README does not justify: $(echo $unjustified)"
[ -z "$stale" ] || fail "the README justifies checkov findings that no longer occur: $(echo $stale)"
echo "checkov: $(echo "$found" | grep -c .) finding(s), each justified in README.md"
echo "cli_helm: OK"
