#!/usr/bin/env bash
# tests/e2e/sample_bench.sh: the bundled sample benchmark through the whole
# pipeline (`streamex run`: coordinator and a worker with its own Kafka +
# Flink pair, running up to 4 tasks at once on it with --slots 4).
# Two methods: reference.jsonl must score 30/30 (gold, computed by the
# example's independent oracle, agrees with Flink), and predictions.jsonl
# must get, task by task, the status in expected.jsonl and so the EX that
# examples/sample-bench/README.md states (checked by
# tests/e2e/sample_verdicts.py, shared with tests/e2e/compose.sh and tests/e2e/slurm.sh).
# Meanwhile a watcher reads the pair's Flink REST /jobs/overview every
# 200 ms: from the start and end times of every streamex job it saw, it
# computes the most jobs that were RUNNING at one moment, which must be at
# least 2 and at most 4 (the slots), and every job's vertices must run with
# parallelism 1 (one TaskManager slot a job). The condition is on Flink's own
# record of the jobs, not on a clock of the test's. Several workers are
# e2e_distributed's, e2e_chaos's and e2e_compose's. Pair index
# $SX_E2E_SAMPLE_INDEX (default 0), started and stopped by the run itself.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
index="${SX_E2E_SAMPLE_INDEX:-0}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
out=$(make_tmpdir) # kept for inspection when the test fails
at_exit "pair_down $index"
rest="http://127.0.0.1:$((21000 + 20 * index + 2))"

# Records every streamex job Flink lists (its times, and its vertices'
# parallelism once it has vertices) into $out/jobs.json until $out/stop exists.
python3 - "$rest" "$out" <<'EOF' &
import json, os, sys, time, urllib.request
rest, out = sys.argv[1], sys.argv[2]
jobs = {}
def get(path):
    with urllib.request.urlopen(rest + path, timeout=2) as answer:
        return json.load(answer)
while not os.path.exists(out + "/stop"):
    try:
        for job in get("/jobs/overview")["jobs"]:
            if not job["name"].startswith("streamex "):
                continue
            seen = jobs.setdefault(job["jid"], {"name": job["name"]})
            seen.update(start=job["start-time"], end=job["end-time"], state=job["state"])
            if not seen.get("parallelism"):  # no vertices while the job initializes
                seen["parallelism"] = [v["parallelism"]
                                       for v in get("/jobs/" + job["jid"])["vertices"]]
            json.dump(jobs, open(out + "/jobs.json.tmp", "w"))
            os.replace(out + "/jobs.json.tmp", out + "/jobs.json")
    except (OSError, ValueError, KeyError):
        pass  # the pair is not up yet, or already going
    time.sleep(0.2)
EOF
watcher=$!
kill_at_exit "$watcher"

"$STREAMEX" run --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --method "reference=$bench/reference.jsonl" --output "$out" --workers 1 \
    --slots 4 --first-index "$index" >"$out/run.log" 2>&1 || {
    tail -n 30 "$out/run.log"
    fail "streamex run exited with an error"
}
touch "$out/stop"
wait "$watcher" || true
grep "EX =" "$out/run.log" || true
grep -q "worker w0 joined (capacity 2, 4 slot(s), flink-" "$out/run.log" ||
    fail "the worker did not announce 4 slots"

python3 "$SX_SOURCE_DIR/tests/e2e/sample_verdicts.py" "$bench" "$out" \
    sample=predictions reference=reference
python3 - "$out/jobs.json" <<'EOF' || fail "see above"
import json, sys
jobs = json.load(open(sys.argv[1]))
# Missing predictions and rejected candidates never reach Flink: about 50 jobs.
assert len(jobs) >= 40, "only %d streamex jobs seen" % len(jobs)
for jid, job in jobs.items():
    assert job["parallelism"] and set(job["parallelism"]) == {1}, (jid, job)
# The most intervals [start, end] that overlap (a running job's end is -1:
# still running when last seen, i.e. until the last moment seen).
last = max(max(j["start"], j["end"]) for j in jobs.values())
events = []
for job in jobs.values():
    events += [(job["start"], 1), (job["end"] if job["end"] > 0 else last, -1)]
running = most = 0
for _, step in sorted(events, key=lambda e: (e[0], e[1])):
    running += step
    most = max(most, running)
print("%d streamex jobs; at most %d RUNNING at once" % (len(jobs), most))
assert 2 <= most <= 4, "at most %d jobs at once, expected 2 to 4" % most
EOF
# The worker's HELLO said what its pair runs (the default engine's label),
# which is the run's engine, and every executed task kept its step times.
source "$SX_SOURCE_DIR/runtime/versions.env"
want="flink-$SX_FLINK_VERSION/kafka-connector-$SX_FLINK_KAFKA_CONNECTOR_VERSION/kafka-$SX_KAFKA_VERSION"
python3 - "$out" "$want" <<'PY'
import json, sys
out, want = sys.argv[1], sys.argv[2]
run = json.load(open(out + "/summary.json"))["run"]
assert run["workers"] == {"w0": want}, "run.workers is %r" % run["workers"]
assert run["engine"] == want, "run.engine is %r" % run["engine"]
for line in open(out + "/reference/results.jsonl"):
    r = json.loads(line)
    steps = r.get("steps")
    # The job's own time is in submit (it starts while its ID is fetched) and
    # run (polled until it ends): a job that ended during submit leaves run at
    # 0.0 after rounding to the millisecond (sb26 in a CI trial).
    job = steps["submit"] + steps["run"] if steps else 0
    assert steps and job > 0 and min(steps.values()) >= 0, "%s: steps %r" % (r["task_id"], steps)
    assert sum(steps.values()) <= r["seconds"] + 0.01, "%s: steps %r over %s s" % (r["task_id"], steps, r["seconds"])
PY
echo "e2e_sample_bench: OK"
