#!/usr/bin/env bash
# tests/e2e/doctor.sh: `streamex doctor --oracle batch` on a real Flink. A small
# bench made here holds a task whose gold (its streaming relation) BATCH
# agrees with, a global aggregate over no rows (streaming gold is empty,
# BATCH gives one row: listed with that cause), and a session window (BATCH
# cannot run it: listed as failing, not as differing). Exit status 1, the
# exact summary line, and --output keeps the batch relations. Then a
# reference written with QUALIFY, which the default engine (Flink 1.20)
# refuses: listed as failing with that engine hazard as its cause, under the
# line naming the engine.
# Uses pair $SX_DOCTOR_INDEX (default 53): started here unless already up,
# and then stopped at the end.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
index="${SX_DOCTOR_INDEX:-53}"
require_runtime "${SX_RUNTIME_DIR:-$SX_SOURCE_DIR/.runtime}"
work=$(make_tmpdir)
started=0
cleanup() {
    [ "$started" = 1 ] && pair_down "$index"
}
at_exit cleanup
fail() { echo "FAIL: $*"; cat "$work/doctor.out" 2>/dev/null; exit 1; }

bench="$work/bench"
with="'connector'='kafka','topic'='\${topic}','properties.bootstrap.servers'='\${bootstrap}'"
source_ddl="CREATE TABLE s (id BIGINT, v DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ($with,'format'='json','scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset')"
# task ID, sink columns, changelog, format, reference SQL, gold CSV
make_task() {
    mkdir -p "$bench/tasks/$1/sources" "$bench/gold" "$bench/evaluation"
    printf 'id,v,at\n1,0.5,2024-01-01 00:00:01\n2,2.5,2024-01-01 00:00:02\n3,4,2024-01-01 00:00:09\n' \
        >"$bench/tasks/$1/sources/s.csv"
    python3 - "$bench/tasks/$1/task.json" "$1" "$source_ddl" "CREATE TABLE \`result\` ($2) WITH ($with,'format'='$4')" "$3" "$2" <<'PY'
import json, sys
path, task_id, source_ddl, sink_ddl, changelog, columns = sys.argv[1:]
json.dump({"task_id": task_id, "question": "doctor fixture",
           "sources": [{"name": "s", "kind": "live", "file": "sources/s.csv",
                        "columns": [{"name": "id"}, {"name": "v"},
                                    {"name": "ts", "from": "at",
                                     "time": {"from": "%Y-%m-%d %H:%M:%S", "to": "sql"}}],
                        "event_time": "ts", "ddl": source_ddl}],
           "sink": {"name": "result", "changelog": changelog, "ddl": sink_ddl},
           "output_schema": [{"name": c.split()[0], "type": c.split()[1]}
                             for c in columns.split(", ")],
           "timeout_s": 120}, open(path, "w"))
PY
    printf '%b' "$6" >"$bench/gold/$1.csv"
    echo '{"ignore_order": true}' >"$bench/evaluation/$1.json"
    echo "$1" >>"$bench/task_ids.txt"
    python3 -c 'import json, sys; print(json.dumps({"task_id": sys.argv[1], "sql": sys.argv[2]}))' \
        "$1" "$5" >>"$bench/reference.jsonl"
}
make_task same "id BIGINT, v DOUBLE" append json "SELECT id, v FROM s WHERE v > 1" 'id,v\n2,2.5\n3,4.0\n'
make_task empty_agg "cnt BIGINT" debezium debezium-json \
    "SELECT COUNT(*) AS cnt FROM s WHERE v > 100" 'cnt\n'
make_task session "window_start TIMESTAMP(3), cnt BIGINT" append json \
    "SELECT window_start, COUNT(*) AS cnt FROM TABLE(SESSION(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end" \
    'window_start,cnt\n2024-01-01 00:00:01,3\n'
"$STREAMEX" check --bench "$bench" --method "ref=$bench/reference.jsonl" >"$work/check.log" 2>&1 ||
    { cat "$work/check.log"; fail "the fixture bench does not pass check"; }

gateway="http://127.0.0.1:$((21000 + 20 * index + 3))"
if ! curl -sf "$gateway/v1/info" >/dev/null 2>&1; then
    "$STREAMEX" runtime up --index "$index" --detach >"$work/up.log" 2>&1 ||
        { tail -n 20 "$work/up.log"; fail "pair $index did not start"; }
    started=1
fi

code=0
"$STREAMEX" doctor --oracle batch --bench "$bench" --index "$index" --output "$work/batch" \
    >"$work/doctor.out" 2>"$work/doctor.err" || code=$?
cat "$work/doctor.out"
[ "$code" = 1 ] || fail "exit $code, expected 1: $(cat "$work/doctor.err")"
grep -qxF "doctor: 3 tasks: 1 agree with BATCH, 1 differ, 1 fail in BATCH mode, 0 without a reference" \
    "$work/doctor.out" || fail "wrong summary"
grep -q "^task empty_agg: gold (STREAMING, 0 rows) differs from BATCH (1 rows)" "$work/doctor.out" ||
    fail "empty_agg not listed"
grep -qF "  cause: a global aggregate over no rows: BATCH gives one row, STREAMING none" \
    "$work/doctor.out" || fail "empty_agg's cause not named"
grep -q "^task session: fails in BATCH mode: .*session" "$work/doctor.out" ||
    fail "session not listed as failing"
[ "$(cat "$work/batch/empty_agg.csv")" = "$(printf 'cnt\n0')" ] || fail "batch CSV of empty_agg"
[ "$(cat "$work/batch/same.csv")" = "$(printf 'id,v\n2,2.5\n3,4.0')" ] || fail "batch CSV of same"
source "$SX_SOURCE_DIR/runtime/versions.env"
engine="flink-$SX_FLINK_VERSION/kafka-connector-$SX_FLINK_KAFKA_CONNECTOR_VERSION/kafka-$SX_KAFKA_VERSION"
[ "$(head -n 1 "$work/doctor.out")" = "engine: $engine" ] || fail "first line: $(head -n 1 "$work/doctor.out")"
case "$SX_FLINK_VERSION" in 1.*) ;; *) fail "the QUALIFY case below expects a 1.x default engine" ;; esac
echo '{"task_id": "same", "sql": "SELECT id, v FROM s QUALIFY v > 1"}' >"$work/qualify.jsonl"
code=0
"$STREAMEX" doctor --oracle batch --bench "$bench" --index "$index" \
    --reference "$work/qualify.jsonl" >"$work/doctor.out" 2>"$work/doctor.err" || code=$?
cat "$work/doctor.out"
[ "$code" = 0 ] || fail "QUALIFY: exit $code, expected 0 (nothing differs): $(cat "$work/doctor.err")"
grep -q "^task same: fails in BATCH mode: .*SqlParserException" "$work/doctor.out" ||
    fail "the QUALIFY reference not listed as failing to parse"
grep -qxF "  cause: the reference uses QUALIFY: Flink 2.x accepts it, Flink 1.20 refuses it (a parse error), so the verdict depends on the engine" \
    "$work/doctor.out" || fail "QUALIFY not named as the cause"
echo "e2e_doctor: OK"
