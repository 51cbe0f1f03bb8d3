#!/usr/bin/env bash
# tests/cli/samples.sh: several samples per task from the command line, with
# the simulated executor (no Kafka, no Flink). A predictions file of 3 samples
# per task on the sample bench (lines in any order, sample 0 with and without
# "sample", some (task, sample) pairs without a line, one unit that needs a
# retry): the exact status and attempts of every (task, sample) in
# results.jsonl, every sample's EX and the mean (printed and in summary.json),
# samples/K/submission.jsonl and the CSVs they point at; a run killed in the
# middle and resumed executes every unit exactly once; --rerun and a changed
# candidate of one sample re-execute only those units; two --shard halves
# merge into the full run's verdicts; --tasks; the result cache keyed per
# sample; the report; `score` of a submission with samples; and every bad
# sample number, in predictions and in submissions, refused with its file,
# line and exact words. The expected verdicts are computed here from the
# markers, never read from streamex's output.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tmp=$(make_tmpdir)

# The predictions and what each (task, sample) must give: task i, sample K
# gets cycle K's (i mod its length)-th marker; "missing" has no line; task 7
# has no sample 0. flaky is infra_error on attempt 1, then match.
python3 - "$bench/task_ids.txt" "$tmp/preds.jsonl" "$tmp/expected.txt" <<'EOF'
import json, sys
ids = open(sys.argv[1]).read().split()
cycles = {0: ["match", "mismatch", "flaky", "flink_error", "match", "timeout", "match"],
          1: ["mismatch", "match", "match", "missing", "rejected_sql", "match"],
          2: ["missing", "match", "eval_error", "match", "mismatch"]}
lines, expected = {0: [], 1: [], 2: []}, []
for i, task in enumerate(ids):
    for k in range(3):
        kind = cycles[k][i % len(cycles[k])]
        if k == 0 and i == 7:
            kind = "missing"
        if kind == "missing":
            expected.append(f"{task} {k} missing_prediction 0")
            continue
        status, attempts = {"flaky": ("match", 2)}.get(kind, (kind, 1))
        expected.append(f"{task} {k} {status} {attempts}")
        line = {"task_id": task, "sql": f"SELECT {k} /*sim:{kind}*/"}
        if k or i % 2:
            line["sample"] = k
        lines[k].append(json.dumps(line))
with open(sys.argv[2], "w") as out:  # sample 1 first, then 2, then 0
    for k in (1, 2, 0):
        out.write("\n".join(lines[k]) + "\n")
open(sys.argv[3], "w").write("\n".join(expected) + "\n")
EOF
preds="$tmp/preds.jsonl"
units=$((total * 3))

# verdicts OUT: "ID SAMPLE STATUS ATTEMPTS" of every line of OUT/m/results.jsonl.
verdicts() {
    sed 's/^{"task_id":"\([^"]*\)","sample":\([0-9]*\),.*"status":"\([^"]*\)".*"attempts":\([0-9]*\),.*/\1 \2 \3 \4/' \
        "$1/m/results.jsonl"
}
# figures.py EXPECTED [lines]: the figures of 3 samples per task the expected
# verdicts ("ID SAMPLE STATUS ATTEMPTS" lines) give, by brute force: pass@k
# as the share of the k-subsets of a task's samples holding a match, maj@3 as
# the verdict of the lowest sample with a final CSV (a simulated final CSV is
# a copy of gold: every sample with one holds the same relation), as JSON,
# or with "lines" the "m: ..." lines a run of them prints.
cat > "$tmp/figures.py" <<'EOF'
import itertools, json, sys
from fractions import Fraction
rows = [line.split() for line in open(sys.argv[1])]
tasks = list(dict.fromkeys(r[0] for r in rows))
status = {(r[0], int(r[1])): r[2] for r in rows}
def pass_at(k):
    total = Fraction(0)
    for t in tasks:
        subsets = list(itertools.combinations(range(3), k))
        total += Fraction(sum(any(status[t, s] == "match" for s in c) for c in subsets),
                          len(subsets))
    return total / len(tasks)
def majority():
    right = 0
    for t in tasks:
        voters = [k for k in range(3) if status[t, k] in ("match", "mismatch")]
        right += bool(voters) and status[t, voters[0]] == "match"
    return Fraction(right, len(tasks))
cs = [sum(1 for r in rows if r[1] == str(k) and r[2] == "match") for k in range(3)]
figures = {"correct": cs, "total": len(tasks),
           "pass_at_k": [float(pass_at(k)) for k in (1, 2, 3)],
           "maj_at_n": float(majority())}
if sys.argv[2:] != ["lines"]:
    json.dump(figures, sys.stdout)
    sys.exit(0)
# the "m: ..." lines a run of those verdicts prints, its intervals left out
t, p = len(tasks), figures["pass_at_k"]
print(f"m: EX = {sum(cs)}/{3 * t} = {sum(cs) / (3 * t):.4f} (mean over 3 samples of {t} task IDs)")
for k, c in enumerate(cs):
    print(f"m: sample {k}: EX = {c}/{t} = {c / t:.4f}, strict EX = {c}/{t} = {c / t:.4f}")
print(f"m: pass@1 = {p[0]:.4f}, pass@2 = {p[1]:.4f}, pass@3 = {p[2]:.4f}; "
      f"maj@3 = {figures['maj_at_n']:.4f}")
print(f"m: strict EX = {sum(cs)}/{3 * t} = {sum(cs) / (3 * t):.4f} (EX but not strict: 0, strict but not EX: 0)")
EOF
# ex_lines EXPECTED: the "m: ..." lines (tests/cli/figures.sh checks the
# intervals printed beside them).
ex_lines() { python3 "$tmp/figures.py" "$1" lines; }
# printed FILE: its "m: ..." lines, each interval taken out.
printed() { grep "^m: " "$1" | sed -E 's/, 95% CI \[[0-9.]+, [0-9.]+\]//'; }

# check OUT LABEL [statuses-only]: results.jsonl, summary.json, the
# submission files and the CSVs are the expected ones.
check() {
    local out="$1" label="$2" fields=4
    [ $# -lt 3 ] || fields=3
    diff <(cut -d' ' -f1-$fields "$tmp/expected.txt") <(verdicts "$out" | cut -d' ' -f1-$fields) ||
        fail "$label: verdicts differ from the expected ones"
    python3 "$tmp/figures.py" "$tmp/expected.txt" > "$tmp/figures.json"
    python3 - "$out" "$tmp/expected.txt" "$total" "$tmp/figures.json" <<'EOF' || fail "$label: summary.json or submissions wrong"
import json, os, sys
out, expected, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [line.split() for line in open(expected)]
m = json.load(open(f"{out}/summary.json"))["methods"]["m"]
# pass@k and maj@3 as brute force gives them
figures = json.load(open(sys.argv[4]))
assert set(m["pass_at_k"]) == {"1", "2", "3"}, m["pass_at_k"]
for k in (1, 2, 3):
    assert abs(m["pass_at_k"][str(k)] - figures["pass_at_k"][k - 1]) < 1e-12, (k, m, figures)
assert m["pass_at_k"]["1"] == m["ex"], m
assert abs(m["maj_at_n"] - figures["maj_at_n"]) < 1e-12, (m["maj_at_n"], figures)
correct = [sum(1 for r in rows if r[1] == str(k) and r[2] == "match") for k in range(3)]
assert (m["samples"], m["total"], m["correct"]) == (3, total, sum(correct)), m
assert m["ex"] == sum(correct) / (3 * total) and m["ex_strict"] == m["ex"], m
assert [p["sample"] for p in m["per_sample"]] == [0, 1, 2], m
assert [p["correct"] for p in m["per_sample"]] == correct, m
assert [p["ex"] for p in m["per_sample"]] == [c / total for c in correct], m
for status in ("match", "mismatch", "missing_prediction", "timeout", "eval_error"):
    assert m["by_status"][status] == sum(1 for r in rows if r[2] == status), (status, m)
official = open(f"{out}/m/submission.jsonl").read()
for k in range(3):
    text = open(f"{out}/m/samples/{k}/submission.jsonl").read()
    assert k or text == official, "submission.jsonl is not sample 0's"
    lines = [json.loads(l) for l in text.splitlines()]
    want = [r for r in rows if r[1] == str(k)]
    assert [l["task_id"] for l in lines] == [r[0] for r in want], k
    for line, row in zip(lines, want):
        assert set(line) == {"task_id", "csv"}, line
        if row[2] in ("match", "mismatch"):
            where = "csv" if k == 0 else f"samples/{k}/csv"
            assert line["csv"] == os.path.realpath(f"{out}/m/{where}/{row[0]}.csv"), line
            assert os.path.isfile(line["csv"]), line
        else:
            assert line["csv"] is None, line
EOF
}

echo "== run --workers 2: every (task, sample) as expected, EX per sample and mean"
"$STREAMEX" -q run --simulate delay_ms=2 --workers 2 --bench "$bench" --method "m=$preds" \
    --output "$tmp/full" > "$tmp/full.txt"
check "$tmp/full" "full run"
diff <(ex_lines "$tmp/expected.txt") <(printed "$tmp/full.txt") ||
    fail "the EX lines are not the expected ones"
[ "$(records "$tmp/full/journal.jsonl" '"result"')" = "$units" ] || fail "journal: not $units records"

echo "== killed in the middle (SIGKILL), --resume executes each unit left exactly once"
"$STREAMEX" -q run --simulate delay_ms=300 --workers 1 --bench "$bench" --method "m=$preds" \
    --output "$tmp/cut" > /dev/null 2> "$tmp/cut.err" &
cut=$!
kill_at_exit "$cut"
wait_records "$tmp/cut/journal.jsonl" '"result"' 12
kill -9 "$cut"
wait "$cut" 2> /dev/null || true
settled=$(records "$tmp/cut/journal.jsonl" '"result"')
[ "$settled" -ge 12 ] && [ "$settled" -lt "$units" ] || fail "journal has $settled records"
[ ! -f "$tmp/cut/m/results.jsonl" ] || fail "a killed run wrote final results"
"$STREAMEX" -q run --simulate delay_ms=2 --workers 2 --bench "$bench" --method "m=$preds" \
    --resume --output "$tmp/cut" > "$tmp/cut.txt"
check "$tmp/cut" "resumed run"
diff <(ex_lines "$tmp/expected.txt") <(printed "$tmp/cut.txt") ||
    fail "resumed run: the EX lines differ"
# A torn last line (cut at the kill) is dropped, never a unit twice.
[ "$(grep -c '"result"' "$tmp/cut/journal.jsonl")" = "$units" ] ||
    fail "a settled unit was executed again: $(grep -c '"result"' "$tmp/cut/journal.jsonl") records"

echo "== --rerun: the infra_error units of an injected failure, each sample, and only them"
infra=${ids[4]} # its three samples all run: match, rejected_sql, mismatch
code=0
"$STREAMEX" -q run --simulate "delay_ms=2,infra_error=$infra" --workers 2 \
    --bench "$bench" --method "m=$preds" --output "$tmp/rr" > /dev/null || code=$?
[ "$code" = 3 ] || fail "a run with infra_error units exited $code, expected 3"
[ "$(grep -c "^{\"task_id\":\"$infra\",\"sample\":[012],.*\"status\":\"infra_error\"" "$tmp/rr/m/results.jsonl")" = 3 ] ||
    fail "the injected task's 3 samples are not infra_error"
"$STREAMEX" run --simulate delay_ms=2 --workers 2 --bench "$bench" --method "m=$preds" \
    --resume --rerun infra_error --output "$tmp/rr" > /dev/null 2> "$tmp/rr.err"
grep -q -- "--rerun infra_error: 3 settled task(s) run again" "$tmp/rr.err" ||
    fail "rerun count: $(grep rerun "$tmp/rr.err")"
check "$tmp/rr" "rerun"
[ "$(records "$tmp/rr/journal.jsonl" '"result"')" = $((units + 3)) ] || fail "rerun executed more than 3 units"

echo "== a changed candidate of one sample: --resume executes that unit alone"
sed "s|^{\"task_id\": \"${ids[1]}\", \"sql\": \"SELECT 2 |&/* changed */ |" "$preds" > "$tmp/changed.jsonl"
[ "$(diff "$preds" "$tmp/changed.jsonl" | grep -c '^>')" = 1 ] || fail "the change is not one line"
"$STREAMEX" -q run --simulate delay_ms=2 --bench "$bench" --method "m=$tmp/changed.jsonl" \
    --resume --output "$tmp/cut" > /dev/null 2>&1
[ "$(records "$tmp/cut/journal.jsonl" '"result"')" = $((units + 1)) ] || fail "not exactly 1 unit executed again"
tail -n 1 "$tmp/cut/journal.jsonl" | grep -q "\"task_id\":\"${ids[1]}\",\"sample\":2," ||
    fail "the unit executed again is not ${ids[1]} sample 2"
check "$tmp/cut" "changed candidate"

echo "== --shard 0/2 and 1/2 merge into the full run's verdicts"
for i in 0 1; do
    "$STREAMEX" -q run --simulate delay_ms=2 --bench "$bench" --method "m=$preds" \
        --shard "$i/2" --output "$tmp/s$i" > /dev/null
done
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" "$tmp/s1" --output "$tmp/merged" > /dev/null
check "$tmp/merged" "merged shards"
"$STREAMEX" -q merge --bench "$bench" "$tmp/s0" --output "$tmp/half" > /dev/null 2>&1 ||
    true
[ "$(grep -c '"status":"infra_error","detail":"missing from every shard output"' "$tmp/half/m/results.jsonl")" = $((units / 2)) ] ||
    fail "a merge of one half does not score the other half's $((units / 2)) units as missing"

echo "== --tasks: every sample of the chosen tasks"
"$STREAMEX" -q run --simulate delay_ms=2 --bench "$bench" --method "m=$preds" \
    --tasks "${ids[2]},${ids[5]}" --output "$tmp/some" > /dev/null
diff <(grep -E "^(${ids[2]}|${ids[5]}) " "$tmp/expected.txt") <(verdicts "$tmp/some") ||
    fail "--tasks: verdicts differ"

echo "== the result cache is keyed per sample: sample 1's entry never serves sample 0"
one=${ids[1]}
printf '{"task_id": "%s", "sql": "SELECT 9 /*sim:match*/", "sample": 1}\n' "$one" > "$tmp/c1.jsonl"
printf '{"task_id": "%s", "sql": "SELECT 9 /*sim:match*/"}\n' "$one" > "$tmp/c2.jsonl"
cat "$tmp/c1.jsonl" >> "$tmp/c2.jsonl"
for i in 1 2; do
    "$STREAMEX" -q run --simulate delay_ms=2 --cache "$tmp/cache" --tasks "$one" --bench "$bench" \
        --method "m=$tmp/c$i.jsonl" --output "$tmp/cache$i" > /dev/null
done
grep -q "^{\"task_id\":\"$one\",\"sample\":1,.*\"cached\":true" "$tmp/cache2/m/results.jsonl" ||
    fail "sample 1 was not served from the cache"
grep "^{\"task_id\":\"$one\",\"sample\":0," "$tmp/cache2/m/results.jsonl" | grep -q '"cached"' &&
    fail "sample 0 was served sample 1's cache entry"
grep -q "^{\"task_id\":\"$one\",\"sample\":0,.*\"status\":\"match\"" "$tmp/cache2/m/results.jsonl" ||
    fail "sample 0 did not run"

echo "== the report shows every sample"
grep -qF ">match 2/3</a>" "$tmp/full/report.html" || fail "no grid cell counting 2 of 3 samples"
grep -qF "<h4>m, sample 2: <span class=\"cell s-eval_error\">" "$tmp/full/report.html" ||
    fail "no task view of a sample 2"

echo "== score: a submission with samples, scored per (task, sample)"
python3 - "$tmp/full" "$tmp/sub.jsonl" <<'EOF'
import json, sys
with open(sys.argv[2], "w") as out:
    for k in (2, 0, 1):
        for line in open(f"{sys.argv[1]}/m/samples/{k}/submission.jsonl"):
            entry = json.loads(line)
            if k:
                entry["sample"] = k
            out.write(json.dumps(entry) + "\n")
EOF
"$STREAMEX" -q score --bench "$bench" --method "m=$tmp/sub.jsonl" --output "$tmp/scored" > "$tmp/scored.txt"
# A simulated final CSV is a copy of gold: what gold scores against itself
# (one sample per task, tie tasks' gold holding more rows than an answer),
# each (task, sample) with a CSV scores; one without is missing.
sed "s|.*|{\"task_id\": \"&\", \"csv\": \"$bench/gold/&.csv\"}|" "$bench/task_ids.txt" > "$tmp/gold.jsonl"
"$STREAMEX" -q score --bench "$bench" --method "g=$tmp/gold.jsonl" --output "$tmp/goldscore" > /dev/null
sed 's/^{"task_id":"\([^"]*\)",.*"status":"\([a-z_]*\)".*/\1 \2/' "$tmp/goldscore/g/results.jsonl" > "$tmp/gold_verdicts.txt"
awk 'NR == FNR { gold[$1] = $2; next }
     { print $1, $2, (($3 == "match" || $3 == "mismatch") ? gold[$1] : "missing_prediction"), 0 }' \
    "$tmp/gold_verdicts.txt" "$tmp/expected.txt" > "$tmp/expected_scored.txt"
diff "$tmp/expected_scored.txt" <(verdicts "$tmp/scored") || fail "score: verdicts differ"
diff <(ex_lines "$tmp/expected_scored.txt") <(printed "$tmp/scored.txt") ||
    fail "score: the EX lines are not the expected ones"
cmp "$tmp/full/m/samples/2/submission.jsonl" "$tmp/scored/m/samples/2/submission.jsonl" ||
    fail "score: sample 2's submission is not the run's"

echo "== bad sample numbers: refused with file, line and the exact words"
# refused FILE WANT COMMAND...: COMMAND exits 2 and prints the line WANT.
refused() {
    local want="$1" code=0
    shift
    "$STREAMEX" -q "$@" > /dev/null 2> "$tmp/err.txt" || code=$?
    [ "$code" = 2 ] || fail "$*: exit $code, expected 2"
    grep -qxF -- "$want" "$tmp/err.txt" || fail "$*: no line '$want' in: $(cat "$tmp/err.txt")"
}
t=${ids[0]}
ok="{\"task_id\": \"$t\", \"sql\": \"SELECT 1\"}"
bad=(
    "{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": -1}|1: sample -1 is negative"
    "$ok
{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": 1.5}|2: sample must be an integer, not 1.5"
    "{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": \"1\"}|1: sample must be an integer, not \"1\""
    "{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": true}|1: sample must be an integer, not true"
    "{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": 100}|1: sample 100 is not below --max-samples 100"
    "{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": 2}
$ok
{\"sample\": 2, \"task_id\": \"$t\", \"sql\": \"SELECT 2\"}|3: second prediction for task '$t', sample 2 (first on line 1)"
)
for case in "${bad[@]}"; do
    printf '%s\n' "${case%%|*}" > "$tmp/bad.jsonl"
    refused "streamex run: method m: $tmp/bad.jsonl:${case#*|}" run --simulate delay_ms=1 \
        --bench "$bench" --method "m=$tmp/bad.jsonl" --output "$tmp/never"
done
printf '%s\n' "{\"task_id\": \"$t\", \"sql\": \"SELECT 1\", \"sample\": 3}" > "$tmp/bad.jsonl"
refused "streamex coordinator: method m: $tmp/bad.jsonl:1: sample 3 is not below --max-samples 3" \
    coordinator --max-samples 3 --bench "$bench" --method "m=$tmp/bad.jsonl" --output "$tmp/never" \
    --bind "tcp://127.0.0.1:$(free_port)"
refused "streamex run: --max-samples '0': expected an integer in [1, 10000]" run --max-samples 0 \
    --simulate delay_ms=1 --bench "$bench" --method "m=$preds" --output "$tmp/never"
sub="{\"task_id\": \"$t\", \"csv\": null"
bad=(
    "$sub, \"sample\": -1}|1: sample -1 is negative"
    "$sub}
$sub, \"sample\": 1.5}|2: sample must be an integer, not 1.5"
    "$sub, \"sample\": \"1\"}|1: sample must be an integer, not \"1\""
    "$sub, \"sample\": false}|1: sample must be an integer, not false"
    "$sub, \"sample\": 100}|1: sample 100 is not below --max-samples 100"
    "$sub, \"sample\": 2}
$sub}
$sub, \"sample\": 2}|3: task \"$t\" sample 2 appears twice (first on line 1)"
    "$sub}
$sub, \"sample\": 0}|2: task \"$t\" appears twice (first on line 1)"
)
for case in "${bad[@]}"; do
    printf '%s\n' "${case%%|*}" > "$tmp/bad.jsonl"
    refused "streamex score: $tmp/bad.jsonl:${case#*|}" score --bench "$bench" \
        --method "m=$tmp/bad.jsonl" --output "$tmp/never"
done
printf '%s\n' "$sub, \"sample\": 3}" > "$tmp/bad.jsonl"
refused "streamex score: $tmp/bad.jsonl:1: sample 3 is not below --max-samples 3" score \
    --max-samples 3 --bench "$bench" --method "m=$tmp/bad.jsonl" --output "$tmp/never"
[ ! -e "$tmp/never/m" ] || fail "a refused input wrote results"

echo "== --repeat with several samples is refused, naming the method"
refused "streamex run: --repeat cannot be combined with several samples per task: method m has 3 samples ($preds); run --repeat on a file of one sample per task" \
    run --repeat 2 --simulate delay_ms=1 --bench "$bench" --method "m=$preds" --output "$tmp/never"
echo "cli_samples: OK"
