#!/usr/bin/env bash
# tests/cli/input_rule.sh: the input rule of common/files.h at its edges through
# `streamex check`, `streamex score` and a simulated `streamex run`, on a
# copy of tests/data/mini-bench. Beside the bench, and beside each of its
# folders, lie folders whose names start with theirs (BENCH2/, gold2/,
# tasks/join_max2/) and an outside folder; every file there holds SECRET43,
# which must never appear in any output, shipped file or report. Each case
# says the exact problems of check, the exact statuses (and the detail of
# each failed one) of score and of run, and their exit codes; every command
# runs under a deadline, so a read that blocks fails the test instead of
# hanging it. Edges: a link into a sibling sharing the name's prefix, ".."
# that leaves and comes back, a chain of links ending outside, an absolute
# link ending inside, loops (accepted, each file shipped once), a folder that
# is itself a link, names with a leading dash or a newline, a file replaced
# by a link between check and the run, a FIFO task.json.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
tmp=$(cd "$(make_tmpdir)" && pwd -P)
bench="$tmp/b"
cp -R "$SX_SOURCE_DIR/tests/data/mini-bench" "$bench"
ids=(join_max clicks_top trades_tie)

# The files no command may read: outside the bench, and in the siblings.
mkdir -p "$tmp/outside" "$tmp/hops" "$tmp/b2" "$bench/gold2" "$bench/tasks/join_max2"
printf 'auction,seller,max_price\n1,SECRET43,12.0\n2,erin,7.25\n' >"$tmp/outside/secret.csv"
cp "$tmp/outside/secret.csv" "$bench/gold2/join_max.csv"
printf 'join_max\nSECRET43\n' >"$tmp/b2/task_ids.txt"
echo SECRET43 >"$bench/tasks/join_max2/notes.txt"
sed 's/"question": "[^"]*"/"question": "SECRET43"/' "$bench/tasks/join_max/task.json" \
    >"$bench/tasks/join_max2/task.json"

# The simulated candidates (each a match) and a submission of join_max's
# gold itself (the other tasks have no line: missing_prediction).
preds="$tmp/preds.jsonl"
sim_predictions "$bench" "$preds"
mkdir "$tmp/sub"
cp "$bench/gold/join_max.csv" "$tmp/sub/join_max.csv"
echo '{"task_id": "join_max", "csv": "join_max.csv"}' >"$tmp/sub/submission.jsonl"

# invoke NAME CODE ARGS...: runs streamex ARGS with a deadline into
# $tmp/NAME.{out,err}; its exit code must be CODE.
invoke() {
    local name=$1 want=$2 code=0
    shift 2
    timeout -s KILL 60 "$STREAMEX" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || code=$?
    if [ "$code" != "$want" ]; then
        sed 's/^/  stderr: /' "$tmp/$name.err" >&2
        fail_later "$name: exit $code, expected $want"
    fi
}

# check_is CODE [LINE...]: `check` exits CODE and its stderr is exactly the
# LINEs, bench and predictions as given, with "problem(s) found" after them.
check_is() {
    local want=$1
    shift
    invoke "$case.check" "$want" check --bench "$bench" --method "m=$preds"
    local expected=("$@")
    [ $# -eq 0 ] || expected+=("streamex check: $# problem$([ $# -eq 1 ] || echo s) found")
    diff <(printf '%s\n' "${expected[@]}" | sed '/^$/d') "$tmp/$case.check.err" >&2 ||
        fail_later "$case: check's problems differ"
}

# verdicts OUT: one line per task of OUT/m/results.jsonl: "ID STATUS" and
# ": DETAIL" when the status is not match.
verdicts() {
    python3 - "$1/m/results.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    detail = "" if r["status"] == "match" else ": " + r["detail"]
    print(r["task_id"], r["status"] + detail)
EOF
}

# verdicts_are NAME OUT OTHERS LINE...: the verdicts of OUT are the LINEs,
# "join_max match" without one, and "ID OTHERS" for the other tasks.
verdicts_are() {
    local name=$1 out=$2 others=$3 id line
    shift 3
    local -A given=([join_max]="join_max match")
    for id in "${ids[@]:1}"; do given[$id]="$id $others"; done
    for line in "$@"; do given[${line%% *}]=$line; done
    diff <(for id in "${ids[@]}"; do echo "${given[$id]}"; done) <(verdicts "$out") >&2 ||
        fail_later "$name: verdicts differ"
}

# nothing_outside_in DIR: no file under DIR (outputs, report, the worker's
# copy of the bench and its file store) holds a byte of a file outside.
nothing_outside_in() {
    if grep -rlF SECRET43 "$1" >&2; then
        fail_later "$case: a file outside the bench reached $1"
    fi
}

# score_is CODE [VERDICT...]: `score` of the submission of gold.
score_is() {
    local want=$1 out="$tmp/$case.score"
    shift
    invoke "$case.score" "$want" score --bench "$bench" --method "m=$tmp/sub/submission.jsonl" \
        --output "$out"
    [ "$want" != 0 ] ||
        verdicts_are "$case.score" "$out" "missing_prediction: no line in the submission" "$@"
    [ ! -d "$out" ] || nothing_outside_in "$out"
}

# run_is CODE [VERDICT...]: a simulated `run` of the predictions.
run_is() {
    local want=$1 out="$tmp/$case.run"
    shift
    invoke "$case.run" "$want" -q run --simulate delay_ms=1 --workers 1 --heartbeat-ms 100 \
        --bench "$bench" --method "m=$preds" --output "$out"
    [ "$want" = 2 ] || verdicts_are "$case.run" "$out" match "$@"
    [ ! -d "$out" ] || nothing_outside_in "$out"
}

# logged NAME TEXT: stderr of invoke NAME holds TEXT.
logged() {
    grep -qF -- "$2" "$tmp/$1.err" || fail_later "$1: stderr lacks: $2"
}

# shipped PATH...: the worker's copy of the bench in the last run holds
# exactly these files under tasks/join_max (paths below it).
shipped() {
    diff <(printf '%s\n' "$@" | sort) \
        <(cd "$tmp/$case.run/.workers/w0/bench/tasks/join_max" && find . -type f | cut -c3- | sort) \
        >&2 || fail_later "$case: the files shipped for join_max differ"
}

gold="$bench/gold/join_max.csv"
outside=" (links must stay inside the folder)"
gold_refused="join_max eval_error: cannot read gold: $gold"
# A simulated worker finds no gold it was not sent: infra_error.
gold_missing="join_max infra_error: $tmp/CASE.run/.workers/w0/bench/gold/join_max.csv: cannot open: No such file or directory (after 3 attempts)"
not_shipped() { echo "${gold_missing//CASE/$case}"; }
keep_gold() { mv "$gold" "$bench/gold/j.real"; }
back_gold() { rm -f "$gold" && mv "$bench/gold/j.real" "$gold"; }

# accepted: check, score and run find the case as the bench as it is, and
# the same files of join_max are shipped.
accepted() {
    check_is 0
    score_is 0
    run_is 0
    shipped task.json sources/auctions.csv sources/bids.csv
}

echo "== the bench as it is"
case=plain
accepted

echo "== gold/ID.csv links into gold2/, a sibling sharing gold's prefix"
case=gold_sibling
keep_gold
ln -s ../gold2/join_max.csv "$gold"
refused="$gold: a link to $bench/gold2/join_max.csv, outside $bench/gold$outside"
check_is 1 "$refused"
score_is 0 "$gold_refused: a link to $bench/gold2/join_max.csv, outside $bench/gold$outside"
run_is 3 "$(not_shipped)"
logged "$case.run" "$refused: not shipped"
back_gold

echo "== a task's file links into tasks/join_max2/, a sibling sharing its prefix"
case=task_sibling
ln -s ../join_max2/notes.txt "$bench/tasks/join_max/notes.txt"
refused="$bench/tasks/join_max/notes.txt: a link to $bench/tasks/join_max2/notes.txt, outside $bench/tasks/join_max$outside"
check_is 1 "task join_max: $refused"
score_is 0
run_is 0
logged "$case.run" "$refused: not shipped"
shipped task.json sources/auctions.csv sources/bids.csv
rm "$bench/tasks/join_max/notes.txt"

echo "== task_ids.txt links into BENCH2/, a sibling of the bench sharing its prefix"
case=list_sibling
mv "$bench/task_ids.txt" "$tmp/ids.keep"
ln -s ../b2/task_ids.txt "$bench/task_ids.txt"
refused="$bench/task_ids.txt: a link to $tmp/b2/task_ids.txt, outside $bench$outside"
check_is 1 "$refused"
score_is 2
logged "$case.score" "streamex score: $refused"
run_is 2
logged "$case.run" "$refused"
rm "$bench/task_ids.txt"
mv "$tmp/ids.keep" "$bench/task_ids.txt"

echo "== links whose '..' leave the folder, or the bench, and come back; absolute links ending inside"
case=come_back
keep_gold
ln -s ../../b/gold/j.real "$gold"
mv "$bench/tasks/join_max/sources/bids.csv" "$bench/tasks/join_max/b.real"
ln -s "$bench/tasks/join_max/b.real" "$bench/tasks/join_max/sources/bids.csv"
check_is 0
score_is 0
run_is 0
shipped task.json b.real sources/auctions.csv sources/bids.csv
rm "$bench/tasks/join_max/sources/bids.csv"
mv "$bench/tasks/join_max/b.real" "$bench/tasks/join_max/sources/bids.csv"
back_gold

echo "== a chain of links ending outside the bench"
case=chain
keep_gold
ln -s "$tmp/outside/secret.csv" "$tmp/hops/h2"
ln -s "$tmp/hops/h2" "$bench/gold/hop"
ln -s hop "$gold"
refused="$gold: a link to $tmp/outside/secret.csv, outside $bench/gold$outside"
check_is 1 "$refused"
score_is 0 "$gold_refused: a link to $tmp/outside/secret.csv, outside $bench/gold$outside"
run_is 3 "$(not_shipped)"
rm "$bench/gold/hop" "$tmp/hops/h2"
back_gold

echo "== loops: a link to the task folder and one to a folder holding it (each file shipped once)"
case=loops
ln -s . "$bench/tasks/join_max/loop"
ln -s .. "$bench/tasks/join_max/sources/back"
accepted
echo "== a link to the folder holding the task folder leads out of it"
case=up
ln -s .. "$bench/tasks/join_max/up"
check_is 1 "task join_max: $bench/tasks/join_max/up: a link to $bench/tasks, outside $bench/tasks/join_max$outside"
score_is 0
run_is 0
shipped task.json sources/auctions.csv sources/bids.csv
rm "$bench/tasks/join_max/loop" "$bench/tasks/join_max/sources/back" "$bench/tasks/join_max/up"

echo "== folders that are links: gold/ into the bench, the task folder out of it"
case=folder_links
mv "$bench/gold" "$bench/gold_real"
ln -s gold_real "$bench/gold"
mv "$bench/tasks/join_max" "$tmp/shelf"
ln -s "$tmp/shelf" "$bench/tasks/join_max"
accepted
rm "$bench/gold" "$bench/tasks/join_max"
mv "$bench/gold_real" "$bench/gold"
mv "$tmp/shelf" "$bench/tasks/join_max"

echo "== names: a leading dash is shipped; a newline cannot be, and check says so"
case=names
echo x >"$bench/tasks/join_max/-x.txt"
check_is 0
run_is 0
shipped -x.txt task.json sources/auctions.csv sources/bids.csv
case=newline
touch "$bench/tasks/join_max/a
b.txt"
check_is 1 "task join_max: $bench/tasks/join_max/a\\x0ab.txt: not a safe file name (1-128 characters of [A-Za-z0-9_.-]), so it cannot be shipped to workers"
rm "$bench/tasks/join_max/-x.txt" "$bench/tasks/join_max/a"?"b.txt"

echo "== gold replaced by a link between check and the run: the check at read time counts"
case=replaced
check_is 0
keep_gold
ln -s ../gold2/join_max.csv "$gold"
score_is 0 "$gold_refused: a link to $bench/gold2/join_max.csv, outside $bench/gold$outside"
run_is 3 "$(not_shipped)"
back_gold

echo "== task.json a link into tasks/join_max2/ (whose question is SECRET43), then a FIFO"
case=task_json
mv "$bench/tasks/join_max/task.json" "$tmp/task.keep"
ln -s ../join_max2/task.json "$bench/tasks/join_max/task.json"
check_is 1 "task join_max: $bench/tasks/join_max/task.json: a link to $bench/tasks/join_max2/task.json, outside $bench/tasks/join_max$outside"
score_is 0
run_is 0
rm "$bench/tasks/join_max/task.json"
case=task_fifo
mkfifo "$bench/tasks/join_max/task.json"
check_is 1 "task join_max: $bench/tasks/join_max/task.json: a FIFO, not a regular file"
score_is 0
run_is 0
shipped sources/auctions.csv sources/bids.csv
rm "$bench/tasks/join_max/task.json"
mv "$tmp/task.keep" "$bench/tasks/join_max/task.json"

echo "== the bench reads as it did"
case=again
check_is 0
finish cli_input_rule
