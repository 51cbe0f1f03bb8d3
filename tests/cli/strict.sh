#!/usr/bin/env bash
# tests/cli/strict.sh: the strict, row-aligned EX beside the frozen one, through
# `streamex score` and `streamex merge`: scrambled rows (frozen 1, strict 0),
# the string-sort numeric case (frozen 0, strict 1), one prediction column
# for two gold columns, a tie task, NULL-heavy frames and unscored tasks;
# "strict" on every results.jsonl line, the summary.json fields, the printed
# lines with the differing tasks and their reasons, and merge carrying (and
# checking) the strict verdicts.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}"
work=$(make_tmpdir)

bench="$work/bench"
csv="$work/sub/csv"
mkdir -p "$bench/gold" "$bench/evaluation" "$csv"
printf 't1\nt2\nt3\nt4\nt5\nt6\nt7\n' >"$bench/task_ids.txt"
for id in t1 t2 t3 t4 t6 t7; do echo '{"ignore_order": true}' >"$bench/evaluation/$id.json"; done
echo '{"answer_policy": {"kind": "any_one_argmax"}}' >"$bench/evaluation/t5.json"

printf 'k,v\n1,x\n2,y\n3,z\n' >"$bench/gold/t1.csv"
printf 'k,v\n1,y\n2,z\n3,x\n' >"$csv/t1.csv"        # every column right, rows scrambled
printf 'a\n0\n-1.5\n' >"$bench/gold/t2.csv"
printf 'a\n-0.001\n-1.5\n' >"$csv/t2.csv"           # '-0.001' < '-1.5' as text
printf 'a,b\n1,1\n2,2\n' >"$bench/gold/t3.csv"
printf 'x\n1\n2\n' >"$csv/t3.csv"                  # one column for two
printf 'a,b,c\n,,x\n1,,\n,2,\n,,\n' >"$bench/gold/t4.csv"
printf 'c,b,a\n,,\n,2,\n,,1\nx,,\n' >"$csv/t4.csv"  # NULL-heavy, rows permuted
printf 'team,points\nA,10\nB,10\n' >"$bench/gold/t5.csv"
printf 't,p\nB,10\n' >"$csv/t5.csv"                # one of the tied rows
printf 'a\n1\n' >"$bench/gold/t6.csv"               # t6: no prediction
printf 'a\n1\n' >"$bench/gold/t7.csv"
printf 'a\n2\n' >"$csv/t7.csv"                      # plainly wrong
sub="$work/sub/submission.jsonl"
for id in t1 t2 t3 t4 t5 t7; do echo "{\"task_id\": \"$id\", \"csv\": \"csv/$id.csv\"}"; done >"$sub"

out="$work/out"
# (--bootstrap 0: the lines without their intervals, tests/cli/figures.sh's)
"$STREAMEX" score --bench "$bench" --method "m=$sub" --output "$out" --bootstrap 0 \
  >"$work/stdout" || fail "score: $(cat "$work/stdout")"
cat >"$work/expected" <<EOF
m: EX = 4/7 = 0.5714
m: strict EX = 3/7 = 0.4286 (EX but not strict: 2, strict but not EX: 1)
  t1: strict 0: rows do not align
  t2: gold column 0 has no equal column in the prediction; strict 1: a numeric pairing the string sort missed
  t3: strict 0: one prediction column used for two gold columns
output: $out
  m: EX = 4/7 = 0.5714; strict EX = 0.4286
report: $out/report.html (open it in a browser, e.g. xdg-open $out/report.html)
EOF
diff -u "$work/expected" "$work/stdout" || fail "printed summary"

results="$out/m/results.jsonl"
[ "$(grep -c '"strict":' "$results")" = 7 ] || fail "strict on every line: $(cat "$results")"
for want in 't1","score":1,"strict":0' 't2","score":0,"strict":1' 't3","score":1,"strict":0' \
  't4","score":1,"strict":1' 't5","score":1,"strict":1' 't6","score":0,"strict":0' \
  't7","score":0,"strict":0'; do
  grep -q "\"task_id\":\"$want" "$results" || fail "$want: $(cat "$results")"
done
for want in '"correct": 4' '"strict_correct": 3' '"ex_not_strict": 2' '"strict_not_ex": 1' \
  '"ex_strict": 0.42857142857142855'; do
  grep -q "$want" "$out/summary.json" || fail "summary.json lacks $want: $(cat "$out/summary.json")"
done

# merge keeps the strict verdicts and refuses inputs that disagree on one.
cp -r "$out" "$work/again"
"$STREAMEX" merge --bench "$bench" "$out" "$work/again" --output "$work/merged" >/dev/null ||
  fail "merge"
# (the same lines but for the CSV paths, which now point into the merge)
diff <(sed 's/"csv":.*//' "$results") <(sed 's/"csv":.*//' "$work/merged/m/results.jsonl") ||
  fail "merged results differ"
grep -q '"strict_correct": 3' "$work/merged/summary.json" || fail "merged summary.json"
sed -i 's/"task_id":"t1","score":1,"strict":0/"task_id":"t1","score":1,"strict":1/' \
  "$work/again/m/results.jsonl"
if "$STREAMEX" merge --bench "$bench" "$out" "$work/again" --output "$work/merged2" \
  2>"$work/merge.err" >/dev/null; then
  fail "merge accepted a strict verdict that disagrees"
fi
grep -q "m/t1 disagrees" "$work/merge.err" || fail "merge error: $(cat "$work/merge.err")"
echo "cli_strict: OK"
