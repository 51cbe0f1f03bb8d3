#!/usr/bin/env bash
# cli_run_simulated.sh: the distributed run from the command line, with the
# simulated executor (no Kafka, no Flink): `run --workers N`, Ctrl-C and
# --resume, --shard I/N + merge, a coordinator with separate worker
# processes (one killed mid-run), CURVE with keygen, and the plain-TCP rule.
set -euo pipefail
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
preds="$bench/predictions.jsonl"
total=$(wc -l < "$bench/task_ids.txt")
tmp=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
lines() { wc -l < "$1" | tr -d ' '; }
statuses() { sed 's/.*"task_id":"\([^"]*\)".*"status":"\([^"]*\)".*/\1 \2/' "$1"; }
port() { echo $((30000 + RANDOM % 10000)); }

echo "== run --workers 2 on the bundled sample"
"$STREAMEX" -q run --simulate delay_ms=5 --workers 2 --output "$tmp/full" > "$tmp/full.txt"
grep -q "sample: EX = " "$tmp/full.txt" || fail "no EX line"
[ "$(lines "$tmp/full/sample/results.jsonl")" = "$total" ] || fail "results.jsonl not $total lines"
[ "$(lines "$tmp/full/sample/submission.jsonl")" = "$total" ] || fail "submission not $total lines"
[ -f "$tmp/full/summary.json" ] || fail "no summary.json"

echo "== an existing output needs --resume; --resume on a finished run does nothing new"
if "$STREAMEX" -q run --simulate delay_ms=5 --output "$tmp/full" 2> "$tmp/err.txt"; then
    fail "reused an output without --resume"
fi
grep -q -- "--resume" "$tmp/err.txt" || fail "no hint about --resume"
"$STREAMEX" -q run --simulate delay_ms=5 --resume --output "$tmp/full" > /dev/null

echo "== Ctrl-C stops a run; --resume finishes only what is left"
rc=0
timeout --preserve-status -s INT 2 \
    "$STREAMEX" -q run --simulate delay_ms=200 --workers 1 --output "$tmp/cut" \
    > /dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "interrupted run exited $rc, expected 1"
settled=$(lines "$tmp/cut/journal.jsonl")
[ "$settled" -gt 0 ] && [ "$settled" -lt "$total" ] || fail "journal has $settled records"
[ ! -f "$tmp/cut/sample/results.jsonl" ] || fail "an interrupted run wrote final results"
"$STREAMEX" -q run --simulate delay_ms=5 --workers 2 --resume --output "$tmp/cut" > /dev/null
[ "$(lines "$tmp/cut/sample/results.jsonl")" = "$total" ] || fail "resumed run incomplete"
[ "$(lines "$tmp/cut/journal.jsonl")" = "$total" ] || fail "a settled task was executed again"

echo "== --shard I/N runs merge into the full run's verdicts"
for i in 0 1 2; do
    "$STREAMEX" -q run --simulate delay_ms=5 --shard "$i/3" --output "$tmp/s$i" > /dev/null
done
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" "$tmp/s1" --output "$tmp/partial" \
    > /dev/null 2>&1 && fail "merge with a shard missing reported success"
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" "$tmp/s1" "$tmp/s2" --output "$tmp/merged" \
    > /dev/null
diff <(statuses "$tmp/full/sample/results.jsonl") \
     <(statuses "$tmp/merged/sample/results.jsonl") || fail "merged verdicts differ"

echo "== coordinator and two worker processes; one is killed mid-run"
p=$(port)
"$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$tmp/dist" \
    --bind "tcp://127.0.0.1:$p" --heartbeat-ms 100 --dead-after-ms 600 > "$tmp/dist.txt" &
coord=$!
pids+=("$coord")
"$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --name doomed --simulate delay_ms=100 \
    --work-dir "$tmp/wd1" --heartbeat-ms 100 &
doomed=$!
pids+=("$doomed")
sleep 1
kill -9 "$doomed"
"$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --name survivor --simulate delay_ms=5 \
    --work-dir "$tmp/wd2" --heartbeat-ms 100 &
pids+=("$!")
wait "$coord" || fail "coordinator failed"
[ "$(lines "$tmp/dist/m/results.jsonl")" = "$total" ] || fail "distributed run incomplete"
grep -q '"worker":"survivor"' "$tmp/dist/m/results.jsonl" || fail "survivor did no work"

echo "== CURVE: only allow-listed workers get work"
"$STREAMEX" keygen coord --dir "$tmp/keys" > /dev/null
"$STREAMEX" keygen good --dir "$tmp/keys" > /dev/null
"$STREAMEX" keygen coord --dir "$tmp/keys" > /dev/null 2>&1 && fail "keygen overwrote a key"
mkdir "$tmp/allow"
cp "$tmp/keys/good.cert" "$tmp/allow/"
p=$(port)
"$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$tmp/curve" \
    --bind "tcp://127.0.0.1:$p" --cert "$tmp/keys/coord.cert" --allow "$tmp/allow" \
    > /dev/null &
coord=$!
pids+=("$coord")
"$STREAMEX" -q worker --connect "tcp://127.0.0.1:$p" --simulate delay_ms=1 \
    --cert "$tmp/keys/good.cert" --server-cert "$tmp/keys/coord.cert" --work-dir "$tmp/wd3" &
pids+=("$!")
wait "$coord" || fail "CURVE run failed"
[ "$(lines "$tmp/curve/m/results.jsonl")" = "$total" ] || fail "CURVE run incomplete"

echo "== plain TCP off loopback is refused without --insecure"
if "$STREAMEX" -q coordinator --bench "$bench" --method "m=$preds" --output "$tmp/plain" \
    --bind "tcp://*:$(port)" 2> "$tmp/err.txt"; then
    fail "plain TCP on * accepted"
fi
grep -q -- "--insecure" "$tmp/err.txt" || fail "no hint about --insecure"
echo "== bad outputs and a bad --simulate: exit 2 with the reason, before anything exists"
# expect_usage_error WANT ARGS...: streamex ARGS exits 2 and says WANT.
expect_usage_error() {
    local want="$1" code=0
    shift
    "$STREAMEX" -q "$@" >/dev/null 2>"$tmp/err.txt" || code=$?
    [ "$code" = 2 ] || fail "$*: exit $code, expected 2"
    grep -qF -- "$want" "$tmp/err.txt" || fail "$*: no '$want' in: $(cat "$tmp/err.txt")"
}
expect_usage_error "streamex run: the output path is empty" run --simulate delay_ms=1 --output ""
expect_usage_error "streamex run: --simulate 'fast': unknown or bad item 'fast'" \
    run --simulate fast --output "$tmp/never"
[ ! -e "$tmp/never" ] || fail "a bad --simulate created its output"
expect_usage_error "is not a folder" run --simulate delay_ms=1 --output "$preds/out"
expect_usage_error "streamex coordinator: the output path is empty" \
    coordinator --bench "$bench" --method "m=$preds" --output "" --bind "tcp://127.0.0.1:$(port)"
expect_usage_error "streamex merge: the output path is empty" \
    merge --bench "$bench" --output "" "$tmp/full"
echo "cli_run_simulated: OK"
