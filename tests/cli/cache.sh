#!/usr/bin/env bash
# tests/cli/cache.sh: the result cache from the command line, with the simulated
# executor (no Kafka, no Flink). A second run with the same --cache folder
# executes nothing that is cached (every match and mismatch comes from the
# cache, scored again, with the same verdicts and changelog figures,
# "cached": true, the summary and the printed line counting them); a changed candidate and a changed task
# file are executed again, and only they; a corrupt entry is a logged miss
# that executes again, never a wrong verdict; infra_error, flink_error and
# missing predictions are never cached; --no-cache neither reads nor writes;
# the coordinator refuses --cache (the cache is a worker's).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
src="$SX_SOURCE_DIR/examples/sample-bench"
tmp=$(make_tmpdir)

# A private copy of the bench: one test changes a task's file.
bench="$tmp/bench"
cp -r "$src" "$bench"
total=$(wc -l < "$bench/task_ids.txt")
mapfile -t ids < "$bench/task_ids.txt"
# Task 0 mismatches, 1 has no prediction, 2 is a flink_error, 3 an injected
# infra_error, every other task matches: total - 4 + 1 cacheable results.
verdicts=("0=mismatch" "1=-" "2=flink_error")
preds="$tmp/preds.jsonl"
sim_predictions "$bench" "$preds" "${verdicts[@]}"
cacheable=$((total - 3))
cache="$tmp/cache"

# run_sim OUT [ARGS...]: streamex run with the cache, stdout in OUT.txt, log in OUT.err.
run_sim() {
    local out="$1" code=0
    shift
    "$STREAMEX" run --workers 2 --simulate "delay_ms=2,infra_error=${ids[3]}" --bench "$bench" \
        --method "m=$preds" --retries 1 --output "$out" "$@" > "$out.txt" 2> "$out.err" || code=$?
    [ "$code" = 3 ] || fail "run $*: exit $code, expected 3 (one infra_error): $(tail -n 5 "$out.err")"
}
entries() { find "$cache/v2" -type f | wc -l; }
cached_ids() { grep '"cached":true' "$1/m/results.jsonl" | sed 's/^{"task_id":"\([^"]*\)".*/\1/' | sort | tr '\n' ' '; }
statuses() { sed 's/^{"task_id":"\([^"]*\)",.*"status":"\([a-z_]*\)".*/\1 \2/' "$1/m/results.jsonl"; }
summary_cached() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["methods"]["m"]["cached"])' "$1/summary.json"; }
# executed OUT: the tasks the workers ran through the executor (log lines
# of finished tasks that do not say they came from the cache).
executed() { grep -E '^.* task m/[^ ]+ attempt [0-9]+: [a-z_]+ \(' "$1.err" | grep -v 'from the result cache' | sed 's/.* task m\/\([^ ]*\) .*/\1/' | sort -u | tr '\n' ' '; }

echo "== first run: nothing cached, the $cacheable match/mismatch results stored"
run_sim "$tmp/o1" --cache "$cache"
[ "$(entries)" = "$cacheable" ] || fail "$(entries) cache entries, expected $cacheable"
[ -z "$(cached_ids "$tmp/o1")" ] || fail "first run has cached results: $(cached_ids "$tmp/o1")"
[ "$(summary_cached "$tmp/o1")" = 0 ] || fail "summary.json cached: $(summary_cached "$tmp/o1")"
! grep -q 'from the result cache' "$tmp/o1.txt" || fail "first run printed a cache line"

echo "== second run: every cacheable task from the cache, nothing else executed again but failures"
run_sim "$tmp/o2" --cache "$cache"
diff <(statuses "$tmp/o1") <(statuses "$tmp/o2") || fail "verdicts differ between the runs"
every_cacheable=$(statuses "$tmp/o1" | awk '$2 == "match" || $2 == "mismatch" {print $1}' | sort | tr '\n' ' ')
[ "$(cached_ids "$tmp/o2")" = "$every_cacheable" ] || fail "cached: $(cached_ids "$tmp/o2"), expected $every_cacheable"
[ "$(summary_cached "$tmp/o2")" = "$cacheable" ] || fail "summary.json cached: $(summary_cached "$tmp/o2")"
grep -qx "m: $cacheable of $total results from the result cache (scored again, not executed)" "$tmp/o2.txt" ||
    fail "no cache line: $(cat "$tmp/o2.txt")"
# A result from the cache reports the changelog of the execution that made
# its CSV: the same figures as the first run's, task by task.
changelogs() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); print(r["task_id"], json.dumps(r.get("changelog"), sort_keys=True))' "$1/m/results.jsonl"; }
diff <(changelogs "$tmp/o1") <(changelogs "$tmp/o2") || fail "changelog figures differ from the cache"
[ "$(changelogs "$tmp/o2" | grep -vc ' null$')" = "$cacheable" ] || fail "not every cached result has its changelog"
grep -q "\"cached\":$cacheable," "$tmp/o2.txt" || fail "progress does not count the hits"
[ "$(executed "$tmp/o2")" = "$(printf '%s\n' "${ids[2]}" "${ids[3]}" | sort | tr '\n' ' ')" ] ||
    fail "executed in the second run: $(executed "$tmp/o2")"
grep -q "^{\"task_id\":\"${ids[0]}\",\"score\":0,\"strict\":0,\"status\":\"mismatch\",.*\"cached\":true," "$tmp/o2/m/results.jsonl" ||
    fail "the mismatch is not a cached mismatch: $(grep "${ids[0]}" "$tmp/o2/m/results.jsonl")"
for i in 0 4; do cmp -s "$tmp/o2/m/csv/${ids[$i]}.csv" "$bench/gold/${ids[$i]}.csv" || fail "${ids[$i]}: cached CSV differs"; done
[ "$(entries)" = "$cacheable" ] || fail "$(entries) entries after the second run"

echo "== another profile: still served, scored again"
run_sim "$tmp/o3" --cache "$cache" --profile spider2-lite-2025-03
[ "$(summary_cached "$tmp/o3")" = "$cacheable" ] || fail "profile 2025-03: cached $(summary_cached "$tmp/o3")"

echo "== one changed candidate: only it executes"
sim_predictions "$bench" "$preds" "${verdicts[@]}" "5+= WHERE 1 = 1"
run_sim "$tmp/o4" --cache "$cache"
[ "$(executed "$tmp/o4")" = "$(printf '%s\n' "${ids[2]}" "${ids[3]}" "${ids[5]}" | sort | tr '\n' ' ')" ] ||
    fail "executed after one candidate changed: $(executed "$tmp/o4")"
[ "$(summary_cached "$tmp/o4")" = $((cacheable - 1)) ] || fail "cached $(summary_cached "$tmp/o4")"
[ "$(entries)" = $((cacheable + 1)) ] || fail "the changed candidate was not stored: $(entries) entries"

echo "== one changed source file: only its task executes"
source_file=$(find "$bench/tasks/${ids[6]}/sources" -name '*.csv' | head -n 1)
echo "" >> "$source_file"
run_sim "$tmp/o5" --cache "$cache"
[ "$(executed "$tmp/o5")" = "$(printf '%s\n' "${ids[2]}" "${ids[3]}" "${ids[6]}" | sort | tr '\n' ' ')" ] ||
    fail "executed after a source changed: $(executed "$tmp/o5")"

echo "== a corrupt entry: a logged miss, executed again with its real verdict"
before=$(find "$cache/v2" -type f -newer "$tmp/o5.err" | wc -l)
[ "$before" = 0 ] || fail "entries newer than the last run"
victim=$(grep -l . "$cache"/v2/*/* | head -n 1)
printf 'x' >> "$victim"
run_sim "$tmp/o6" --cache "$cache"
grep -q "result cache: $victim is corrupt (.*): removed, the task runs" "$tmp/o6.err" ||
    fail "corrupt entry not logged: $(grep -i cache "$tmp/o6.err" | head)"
[ "$(summary_cached "$tmp/o6")" = $((cacheable - 1)) ] || fail "cached with a corrupt entry: $(summary_cached "$tmp/o6")"
diff <(statuses "$tmp/o5") <(statuses "$tmp/o6") || fail "a corrupt entry changed a verdict"
tail -c 1 "$victim" | grep -qv x || fail "the corrupt entry was not replaced"

echo "== --no-cache: nothing read, nothing written"
rm -rf "$cache"
run_sim "$tmp/o7" --cache "$cache" --no-cache
[ ! -e "$cache" ] || fail "--no-cache wrote $cache"
[ "$(summary_cached "$tmp/o7")" = 0 ] || fail "--no-cache: cached $(summary_cached "$tmp/o7")"
echo "== --simulate without --cache uses none (not even \$SX_CACHE_DIR)"
SX_CACHE_DIR="$cache" run_sim "$tmp/o8"
[ ! -e "$cache" ] || fail "a simulated run filled the default cache"

echo "== the coordinator refuses --cache: the cache is a worker's"
code=0
"$STREAMEX" coordinator --bench "$bench" --method "m=$preds" --output "$tmp/o9" \
    --bind tcp://127.0.0.1:1 --cache "$cache" > /dev/null 2> "$tmp/err.txt" || code=$?
[ "$code" = 2 ] || fail "coordinator --cache: exit $code"
echo "cli_cache: OK"
