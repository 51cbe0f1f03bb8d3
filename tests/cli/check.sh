#!/usr/bin/env bash
# tests/cli/check.sh: `streamex check` at the command line. The fixture bench
# tests/data/mini-bench must pass with the exact summary; a copy broken in
# many places at once must fail with exit 1 and every expected problem line
# (check collects all problems, it does not stop at the first); bad usage
# exits 2. Needs STREAMEX and SX_SOURCE_DIR (set by ctest).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"

fixture="$SX_SOURCE_DIR/tests/data/mini-bench"
work=$(make_tmpdir)

# run NAME EXPECTED_CODE ARGS...: runs streamex check, keeps out/err.
run() {
    local name=$1 expected=$2
    shift 2
    local code=0
    "$STREAMEX" check "$@" >"$work/$name.out" 2>"$work/$name.err" || code=$?
    if [ "$code" != "$expected" ]; then
        fail_later "$name: exit $code, expected $expected"
        sed 's/^/  stderr: /' "$work/$name.err" >&2
    fi
}

# expect_line NAME FILE LINE: FILE (out or err) of run NAME holds LINE exactly.
expect_line() {
    if ! grep -qxF -- "$3" "$work/$1.$2"; then
        fail_later "$1: no line in std$2: $3"
        sed "s/^/  std$2: /" "$work/$1.$2" >&2
    fi
}

# expect_prefix NAME FILE PREFIX: some line of std FILE starts with PREFIX
# (for messages whose wording belongs to another module).
expect_prefix() {
    if ! grep -qF -- "$3" <(cut -c1-${#3} "$work/$1.$2"); then
        fail_later "$1: no line in std$2 starting with: $3"
        sed "s/^/  std$2: /" "$work/$1.$2" >&2
    fi
}

# --- usage ------------------------------------------------------------------
run help 0 --help
expect_line help out "usage: streamex check --bench BENCH [--method NAME=FILE ...]"
run no_bench 2
expect_line no_bench err "streamex check: --bench BENCH is required"
run unknown_option 2 --bench "$fixture" --verbose
expect_line unknown_option err "streamex check: unknown option '--verbose'"
run missing_value 2 --bench
expect_line missing_value err "streamex check: --bench needs a value"
run bad_method 2 --bench "$fixture" --method predictions.jsonl
expect_line bad_method err "streamex check: --method 'predictions.jsonl': expected NAME=FILE"
run twice_method 2 --bench "$fixture" --method a=x.jsonl --method a=y.jsonl
expect_line twice_method err "streamex check: --method a given twice"
run stray_argument 2 --bench "$fixture" extra
expect_line stray_argument err "streamex check: unexpected argument 'extra'"

# --- the good fixture ---------------------------------------------------------
# A candidate the SQL check rejects is no problem of the file, only counted.
cat >"$work/rejected.jsonl" <<'EOF'
{"task_id": "join_max", "sql": "SELECT auction, seller, price FROM bids JOIN auctions ON auction = id"}
{"task_id": "clicks_top", "sql": "CREATE TABLE x (a INT); SELECT 1"}
EOF
run good 0 --bench "$fixture" --method demo="$fixture/predictions.jsonl" \
    --method other="$work/rejected.jsonl"
expect_line good out "bench $fixture: 3 tasks, 4 sources (3 live, 1 static), tie tasks: 1 any_one_argmax, 1 any_k_from_tie_set"
expect_line good out "method demo: 2 predictions, 1 missing, 0 rejected before Flink"
expect_line good out "method other: 2 predictions, 1 missing, 1 rejected before Flink"
[ -s "$work/good.err" ] && fail_later "good: unexpected stderr: $(cat "$work/good.err")"
# The runtime is reported, never a problem of the bench: installed or not.
expect_prefix good out "runtime: "
SX_RUNTIME_DIR="$work/no-runtime" run no_runtime 0 --bench "$fixture"
expect_line no_runtime out "runtime: not installed: run scripts/setup-runtime.sh (no $work/no-runtime/installed.env)"

run no_bench_dir 1 --bench "$work/nowhere"
expect_line no_bench_dir err "$work/nowhere/task_ids.txt: cannot open: No such file or directory"

# --- a copy broken in many places: every problem is reported ----------------
bench="$work/broken"
cp -R "$fixture" "$bench"
printf 'join_max\nclicks_top\n\ntrades_tie\njoin_max\nghost\n' >"$bench/task_ids.txt"
sed -i 's/"kind": "static"/"kind": "stream"/; s/"from": "ts"/"from": "time"/' \
    "$bench/tasks/join_max/task.json"
sed -i 's/"changelog": "append"/"changelog": "retract"/' "$bench/tasks/clicks_top/task.json"
sed -i 's/%d\/%m\/%Y/%d\/%m\/%Q/' "$bench/tasks/trades_tie/task.json"
rm "$bench/gold/trades_tie.csv"
echo '{"condition_cols": [0, 7], "answer_policy": {"kind": "any_one_argmax"}}' \
    >"$bench/evaluation/clicks_top.json"
cat >"$bench/preds.jsonl" <<'EOF'
{"task_id": "join_max", "sql": "SELECT 1"}
not json
{"task_id": "nobody", "sql": "SELECT 2"}
{"task_id": "join_max", "sql": "SELECT 3"}
{"task_id": "trades_tie", "query": "SELECT 4"}
EOF
# A gold file that pandas cannot read (empty) is named with pandas' reason.
gold_bench="$work/empty-gold"
cp -R "$fixture" "$gold_bench"
: >"$gold_bench/gold/join_max.csv"
run empty_gold 1 --bench "$gold_bench"
expect_line empty_gold err "$gold_bench/gold/join_max.csv: No columns to parse from file"

run broken 1 --bench "$bench" --method m="$bench/preds.jsonl"
expect_line broken err "$bench/task_ids.txt:3: empty line (each line holds one task ID)"
expect_line broken err "$bench/task_ids.txt:5: duplicate task ID 'join_max' (first on line 1)"
expect_line broken err "task join_max: sources[1].kind: must be \"live\" or \"static\", not 'stream'"
expect_line broken err "task join_max: sources[0].columns[2]: takes 'time' but sources/bids.csv has no such column (header: auction_id, bidder, price, ts)"
expect_line broken err "task clicks_top: sink.changelog: must be \"upsert\", \"debezium\" or \"append\", not 'retract'"
expect_line broken err "task trades_tie: sources[0].columns[2].time.from: '%d/%m/%Q %H:%M:%S.%f': unknown conversion %Q (accepted: %Y %y %m %d %e %b %B %h %a %A %H %I %p %M %S %f %F %T %D %R %n %t %%)"
expect_line broken err "task ghost: $bench/tasks/ghost: no such folder"
expect_line broken err "$bench/evaluation/clicks_top.json: condition_cols holds 7 but $bench/gold/clicks_top.csv has 3 columns"
expect_line broken err "$bench/gold/trades_tie.csv: cannot open: No such file or directory"
expect_line broken err "$bench/preds.jsonl:2: not JSON (column 3): '[' or '{' expected near 'not'"
expect_line broken err "$bench/preds.jsonl:3: task ID 'nobody' is not in task_ids.txt"
expect_line broken err "$bench/preds.jsonl:4: second prediction for task 'join_max' (first on line 1)"
expect_line broken err "$bench/preds.jsonl:5: unknown field 'query' (a prediction has task_id and sql)"
expect_line broken err "$bench/preds.jsonl:5: missing sql"
expect_line broken err "streamex check: 16 problems found"
[ -s "$work/broken.out" ] && fail_later "broken: printed a summary despite problems"

# --- inputs that load but would fail on a worker: check runs the preparation
bench="$work/inputs"
cp -R "$fixture" "$bench"
sed -i 's/2024-03-05 10:00:04/2024-02-30 10:00:04/' "$bench/tasks/join_max/sources/bids.csv"
sed -i 's/1709632820000,u1/17096328x0000,u1/' "$bench/tasks/clicks_top/sources/clicks.csv"
sed -i "s/'\${bootstrap}','format'='debezium-json'/'\${brokers}','format'='debezium-json'/" \
    "$bench/tasks/trades_tie/task.json"
run inputs 1 --bench "$bench"
expect_prefix inputs err "task join_max: sources/bids.csv:4: "
expect_prefix inputs err "task clicks_top: sources/clicks.csv:4: "
expect_prefix inputs err "task trades_tie: sink.ddl: "
expect_line inputs err "streamex check: 3 problems found"

# --- hostile files: links out of their folder, a NUL byte, a device, a FIFO,
# files over their limit. Nothing blocks; every one is named.
bench="$work/hostile"
cp -R "$fixture" "$bench"
ln -s /etc/passwd "$bench/tasks/join_max/notes.txt"
printf 'x\0y' >>"$bench/tasks/clicks_top/sources/clicks.csv"
rm "$bench/gold/trades_tie.csv"
ln -s /dev/zero "$bench/gold/trades_tie.csv"
mkfifo "$work/fifo.jsonl"
timeout 20 "$STREAMEX" check --bench "$bench" --method "p=$work/fifo.jsonl" \
    >"$work/hostile.out" 2>"$work/hostile.err" && fail_later "hostile: accepted"
expect_line hostile err "task join_max: $bench/tasks/join_max/notes.txt: a link to /etc/passwd, outside $bench/tasks/join_max (links must stay inside the folder)"
expect_line hostile err "task clicks_top: sources[0].file: $bench/tasks/clicks_top/sources/clicks.csv:6: a NUL byte (a CSV field is text)"
expect_line hostile err "$bench/gold/trades_tie.csv: a link to /dev/zero, outside $bench/gold (links must stay inside the folder)"
expect_line hostile err "$work/fifo.jsonl: a FIFO, not a regular file"
expect_line hostile err "streamex check: 4 problems found"
SX_MAX_JSON_BYTES=100 run json_limit 1 --bench "$fixture"
expect_line json_limit err "task join_max: $fixture/tasks/join_max/task.json: larger than the limit of 100 bytes for JSON files (set SX_MAX_JSON_BYTES to raise it)"
SX_MAX_JSON_BYTES=1M SX_MAX_CSV_BYTES=4K run raised_limits 0 --bench "$fixture"
SX_MAX_CSV_BYTES=4GB run bad_limit 2 --bench "$fixture"
expect_line bad_limit err "streamex check: SX_MAX_CSV_BYTES='4GB': not a size in bytes (e.g. 4G, 512M, 1000)"

# --- DDL that is not the one CREATE TABLE of its table is refused by check,
# before a worker would send it: another name, a statement after it.
bench="$work/ddl"
cp -R "$fixture" "$bench"
sed -i 's/"CREATE TABLE bids (/"CREATE TABLE bid (/' "$bench/tasks/join_max/task.json"
sed -i "s/'format'='json')\"}/'format'='json'); DROP TABLE x\"}/" \
    "$bench/tasks/clicks_top/task.json"
run ddl 1 --bench "$bench"
expect_line ddl err "task join_max: sources[0].ddl: creates table 'bid' at line 1, column 14, but the table is declared as 'bids' (they must be the same)"
expect_line ddl err "task clicks_top: sink.ddl: holds 2 statements (only its CREATE TABLE may be sent to Flink)"
expect_line ddl err "streamex check: 2 problems found"

finish cli_check
