#!/usr/bin/env bash
# tests/cli/engines.sh: the engine as a choice, without a real runtime
# (worker/pair/engine.h). --version lists the engines of a runtime folder
# laid out as scripts/setup-runtime.sh lays it out (markers only); --flink
# of runtime, run, worker, exec and doctor refuses a malformed version and
# an engine that is not installed, naming the setup command, before any pair
# starts; it does not go with --simulate or an existing pair. With the
# simulated executor (--simulate engine=NAME: "simulated-NAME"): every
# executed result and summary.json's run name the engine; a coordinator
# refuses a worker of another engine than its first worker's before giving
# it a task (the refused worker exits 2 with the reason), unless
# --allow-mixed-engines; merge refuses shards of different engines, naming
# both, unless --allow-mixed-engines.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)
export SX_RUNTIME_DIR="$tmp/rt"
mkdir -p "$SX_RUNTIME_DIR"

# expect CODE TEXT ARGS...: streamex ARGS exits CODE and its stderr holds TEXT.
expect() {
    local code="$1" text="$2" got=0
    shift 2
    "$STREAMEX" "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
    if [ "$got" != "$code" ] || ! grep -qF -- "$text" "$tmp/err"; then
        fail_later "streamex $*: exit $got (want $code), stderr: $(head -c 600 "$tmp/err")"
    fi
}

echo "== --version lists the installed engines"
"$STREAMEX" --version | tail -n 1 >"$tmp/none"
[ "$(cat "$tmp/none")" = "engines installed in $SX_RUNTIME_DIR: none (scripts/setup-runtime.sh [--flink X.Y])" ] ||
    fail_later "no engine: $(cat "$tmp/none")"
printf 'SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\nSX_KAFKA_VERSION=3.9.1\n' \
    >"$SX_RUNTIME_DIR/installed.env"
mkdir -p "$SX_RUNTIME_DIR/flink-2.2" "$SX_RUNTIME_DIR/flink-2.1"
printf 'SX_FLINK_VERSION=2.2.1\nSX_FLINK_KAFKA_CONNECTOR_VERSION=5.0.0-2.2\nSX_KAFKA_VERSION=3.9.1\n' \
    >"$SX_RUNTIME_DIR/flink-2.2/installed.env"
"$STREAMEX" --version | tail -n 3 >"$tmp/two"
printf '%s\n' "engines installed in $SX_RUNTIME_DIR:" \
    "  flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1 (default; --flink 1.20)" \
    "  flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1 (--flink 2.2)" >"$tmp/want"
diff "$tmp/want" "$tmp/two" >&2 || fail_later "--version with two engines"

echo "== --flink: malformed, not installed, or with nothing to pick"
missing="Flink 2.1 is not installed in $SX_RUNTIME_DIR: run scripts/setup-runtime.sh --flink 2.1 (installed: 1.20.3, 2.2.1)"
malformed="--flink 'two': expected a Flink version X.Y or X.Y.Z, e.g. 2.2"
expect 2 "$missing" runtime up --index 151 --flink 2.1
expect 2 "$malformed" runtime up --index 151 --flink two
expect 2 "--flink picks an installed engine: an external pair (--kafka-bootstrap ...) runs its own" \
    runtime up --flink 2.2 --kafka-bootstrap h:1 --flink-gateway http://h:2 --flink-rest http://h:3
expect 2 "$missing" run --bench "$bench" --method "m=$bench/predictions.jsonl" \
    --output "$tmp/never" --first-index 151 --flink 2.1
[ ! -e "$SX_RUNTIME_DIR/pairs/151" ] || fail_later "run started a pair for an engine it lacks"
expect 2 "$malformed" run --bench "$bench" --method "m=$bench/predictions.jsonl" \
    --output "$tmp/never" --flink two
expect 2 "--flink picks the engine of the workers' pairs; --simulate starts none" \
    run --simulate delay_ms=1 --flink 2.2 --output "$tmp/never"
expect 2 "$malformed" worker --connect tcp://127.0.0.1:1 --flink two
expect 2 "--flink picks the engine of the worker's own pair; --simulate and an existing pair have none to pick" \
    worker --connect tcp://127.0.0.1:1 --flink 2.2 --simulate delay_ms=1
expect 2 "--allow-mixed-engines is the coordinator's option, not a worker's" \
    worker --connect tcp://127.0.0.1:1 --simulate delay_ms=1 --allow-mixed-engines
expect 2 "$missing" exec --bench "$bench" --task "${ids[0]}" \
    --method "m=$bench/predictions.jsonl" --index 151 --flink 2.1
expect 2 "--flink picks the engine of a local pair; an external pair runs its own" \
    exec --bench "$bench" --task "${ids[0]}" --method "m=$bench/predictions.jsonl" \
    --flink 2.2 --kafka-bootstrap h:1 --flink-gateway http://h:2 --flink-rest http://h:3
expect 2 "the run of the references failed (exit 2): $missing" \
    doctor --bench "$bench" --index 151 --flink 2.1 --output "$tmp/never"
expect 2 "--flink picks the engine of the local pairs; the given Flink and --simulate have none to pick" \
    doctor --oracle batch --bench "$bench" --flink 2.2 --flink-gateway http://h:2 --flink-rest http://h:3

echo "== the results name their engine"
preds="$tmp/preds.jsonl"
sim_predictions "$bench" "$preds" 1=- 2=mismatch
"$STREAMEX" -q run --simulate delay_ms=1,engine=a --bench "$bench" --method "m=$preds" \
    --output "$tmp/a" --workers 2 >/dev/null || fail "run --simulate engine=a"
python3 - "$tmp/a" "${ids[1]}" <<'PY' || fail_later "results of engine a"
import json, sys
out, missing = sys.argv[1], sys.argv[2]
run = json.load(open(out + "/summary.json"))["run"]
assert run["engine"] == "simulated-a", run
assert run["workers"] == {"w0": "simulated-a (no Kafka, no Flink)",
                          "w1": "simulated-a (no Kafka, no Flink)"}, run
for line in open(out + "/m/results.jsonl"):
    r = json.loads(line)
    want = None if r["task_id"] == missing else "simulated-a"
    assert r.get("engine") == want, r
PY

echo "== a coordinator refuses a worker of another engine"
# coordinator OUT [ARGS...]: starts one on a free port (its pid in $coord,
# its port in $port, its stdout in OUT.txt).
coordinator() {
    local out="$1"
    shift
    port=$(free_port)
    "$STREAMEX" coordinator --bench "$bench" --method "m=$preds" --output "$out" \
        --bind "tcp://127.0.0.1:$port" --heartbeat-ms 200 --dead-after-ms 3000 "$@" \
        >"$out.txt" 2>"$out.err" &
    coord=$!
    kill_at_exit "$coord"
}
# worker NAME ENGINE [ARGS...]: a simulated worker of ENGINE, in the background:
# one task at a time, 0.2 s each, so the run lasts while a second one joins.
worker() {
    local name="$1" engine="$2"
    shift 2
    "$STREAMEX" -q worker --connect "tcp://127.0.0.1:$port" --name "$name" \
        --simulate "delay_ms=200,engine=$engine" --slots 1 --work-dir "$tmp/wd-$name" \
        --heartbeat-ms 200 --dead-after-ms 3000 "$@" 2>"$tmp/$name.err" &
    kill_at_exit "$!"
}
coordinator "$tmp/mixed"
worker first a
first=$!
wait_records "$tmp/mixed.err" "worker first joined" 1
worker other b
other=$!
code=0
wait "$other" || code=$?
[ "$code" = 2 ] || fail_later "the refused worker exited $code"
grep -qxF "streamex worker: the coordinator refused: worker other runs simulated-b, but worker first of this run runs simulated-a; a mixed EX describes no engine (the coordinator's --allow-mixed-engines mixes them)" \
    "$tmp/other.err" || fail_later "refused worker's reason: $(cat "$tmp/other.err")"
wait "$coord" || fail "the coordinator of the refused worker exited $?"
wait "$first" || true
! grep -q '"worker":"other"' "$tmp/mixed/m/results.jsonl" || fail_later "the refused worker ran tasks"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["engine"])' "$tmp/mixed/summary.json")" = simulated-a ] ||
    fail_later "run.engine of the refused run"

echo "== --allow-mixed-engines lets both in"
coordinator "$tmp/allowed" --allow-mixed-engines
worker first a
wait_records "$tmp/allowed.err" "worker first joined" 1
worker other b
wait "$coord" || fail "the coordinator with --allow-mixed-engines exited $?"
python3 - "$tmp/allowed" <<'PY' || fail_later "mixed results"
import json, sys
out = sys.argv[1]
engines = {json.loads(l).get("engine") for l in open(out + "/m/results.jsonl")} - {None}
run = json.load(open(out + "/summary.json"))["run"]
assert set(run["engine"].split("; ")) == engines, (run["engine"], engines)
assert engines <= {"simulated-a", "simulated-b"} and "simulated-a" in engines, engines
PY

echo "== merge refuses shards of different engines"
"$STREAMEX" -q run --simulate delay_ms=1,engine=a --bench "$bench" --method "m=$preds" \
    --output "$tmp/s0" --shard 0/2 >/dev/null || fail "shard 0"
"$STREAMEX" -q run --simulate delay_ms=1,engine=b --bench "$bench" --method "m=$preds" \
    --output "$tmp/s1" --shard 1/2 >/dev/null || fail "shard 1"
expect 2 "$tmp/s0 was computed on simulated-a, $tmp/s1 on simulated-b: a mixed EX describes no engine (--allow-mixed-engines merges them anyway)" \
    merge --bench "$bench" "$tmp/s0" "$tmp/s1" --output "$tmp/merged"
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" "$tmp/s1" --output "$tmp/merged" \
    --allow-mixed-engines >/dev/null || fail_later "merge --allow-mixed-engines"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["engine"])' "$tmp/merged/summary.json")" = "simulated-a; simulated-b" ] ||
    fail_later "merged run.engine"
finish cli_engines
