#!/usr/bin/env bash
# tests/cli/score.sh: `streamex score` end to end on a small bench made here:
# every task ID scored once in task_ids.txt order, missing lines and null
# CSVs kept in the denominator, relative CSV paths taken from the submission's
# folder, unreadable predictions scored 0, both profiles, the tie adapter,
# and bad submissions refused with the file and line named.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}"
work=$(make_tmpdir)

bench="$work/bench"
mkdir -p "$bench/gold" "$bench/evaluation" "$work/sub/csv"
printf 't1\nt2\nt3\nt4\nt5\nt6\nt7\n' >"$bench/task_ids.txt"
ordinary='{"condition_cols": [], "ignore_order": true, "answer_policy": {"kind": "ordinary"}}'
for id in t1 t2 t3 t4 t5 t6; do echo "$ordinary" >"$bench/evaluation/$id.json"; done
echo '{"answer_policy": {"kind": "any_one_argmax"}}' >"$bench/evaluation/t7.json"
printf 'id,price\n1,2.5\n2,\n' >"$bench/gold/t1.csv"   # NaN: profiles differ
printf 'name\nb\na\n' >"$bench/gold/t2.csv"
printf 'x\n1\n' >"$bench/gold/t3.csv"
printf 'x\n1\n' >"$bench/gold/t4.csv"
printf 'x\n1\n' >"$bench/gold/t5.csv"
printf 'x\n1\n' >"$bench/gold/t6.csv"
printf 'team,points\nA,10\nB,10\n' >"$bench/gold/t7.csv"

printf 'price,id\n2.5,1\n0,2\n' >"$work/sub/csv/t1.csv"      # 0 equals NaN only in 2025-11
printf 'n\na\nb\n' >"$work/sub/csv/t2.csv"                   # order ignored
printf 'x\n2\n' >"$work/sub/csv/t3.csv"                      # wrong value
printf 'p,q\nB,10\n' >"$work/sub/csv/t7.csv"                 # one of the tied rows
sub="$work/sub/submission.jsonl"
{
  echo '{"task_id": "t7", "csv": "csv/t7.csv"}'
  echo "{\"task_id\": \"t1\", \"csv\": \"$work/sub/csv/t1.csv\"}"
  echo ''
  echo '{"task_id": "t2", "csv": "csv/t2.csv"}'
  echo '{"task_id": "t3", "csv": "csv/t3.csv"}'
  echo '{"task_id": "t4", "csv": null}'
  echo '{"task_id": "t6", "csv": "csv/does-not-exist.csv"}'
} >"$sub"

"$STREAMEX" score --help | grep -q -- '--profile' || fail "--help"

out="$work/out"
"$STREAMEX" score --bench "$bench" --method "m=$sub" --output "$out" >"$work/stdout" ||
  fail "score exited $?"
grep -Eqx "m: EX = 3/7 = 0\.4286$SX_CI_RE" "$work/stdout" || fail "EX line: $(cat "$work/stdout")"
order="$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["task_id"] for l in open(sys.argv[1])))' "$out/m/results.jsonl")"
[ "$order" = "t1 t2 t3 t4 t5 t6 t7" ] || fail "results order: $order"
status_of() {
  python3 - "$out/m/results.jsonl" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["task_id"] == sys.argv[2]:
        print(r["status"], r["score"], r["attempts"], repr(r["worker"]))
EOF
}
[ "$(status_of t1)" = "match 1 0 ''" ] || fail "t1: $(status_of t1)"
[ "$(status_of t2)" = "match 1 0 ''" ] || fail "t2: $(status_of t2)"
[ "$(status_of t3)" = "mismatch 0 0 ''" ] || fail "t3: $(status_of t3)"
[ "$(status_of t4)" = "missing_prediction 0 0 ''" ] || fail "t4: $(status_of t4)"
[ "$(status_of t5)" = "missing_prediction 0 0 ''" ] || fail "t5: $(status_of t5)"
[ "$(status_of t6)" = "mismatch 0 0 ''" ] || fail "t6: $(status_of t6)"
[ "$(status_of t7)" = "match 1 0 ''" ] || fail "t7: $(status_of t7)"
grep -q '"csv":"'"$work"'/sub/csv/t2.csv"' "$out/m/submission.jsonl" || fail "absolute csv path"
grep -q '{"task_id":"t4","csv":null}' "$out/m/submission.jsonl" || fail "null csv"
python3 - "$out/summary.json" <<'EOF' || fail "summary.json"
import json, sys
m = json.load(open(sys.argv[1]))["methods"]["m"]
assert (m["correct"], m["total"]) == (3, 7), m
assert abs(m["ex"] - 3 / 7) < 1e-9, m
assert m["by_status"]["missing_prediction"] == 2 and m["by_status"]["mismatch"] == 2, m
EOF

# The earlier profile keeps NaN: 0 no longer equals the missing price.
"$STREAMEX" score --bench "$bench" --method "m=$sub" --output "$work/out03" \
  --profile spider2-lite-2025-03 >"$work/stdout03"
grep -Eqx "m: EX = 2/7 = 0\.2857$SX_CI_RE" "$work/stdout03" || fail "2025-03: $(cat "$work/stdout03")"

# The misses have their diffs (OUT/NAME/diff/ID.json), the rest none: t3's
# wrong value, t6's unreadable CSV; under 2025-03 also t1, whose 0 is not
# the missing price. A score again into the same OUT after t3 is fixed
# removes t3's.
[ "$(ls "$out/m/diff")" = "$(printf 't3.json\nt6.json')" ] || fail "diffs: $(ls "$out/m/diff")"
[ "$(cat "$out/m/diff/t3.json")" = '{"task_id":"t3","verdict":0,"strict":0,"profile":"spider2-lite-2025-11","policy":{"kind":"ordinary","ignore_order":true,"condition_cols":[],"tolerance":0.01},"gold_rows":1,"prediction_rows":1,"columns":[{"gold":"x","gold_index":0,"prediction":"x","prediction_index":0,"by":"name"}],"missing":{"count":1,"rows":[[1]]},"extra":{"count":1,"rows":[[2]]},"exact":true}' ] ||
  fail "t3's diff: $(cat "$out/m/diff/t3.json")"
grep -q '"missing":{"count":1,"rows":\[\[1\]\]},"extra":{"count":0,"rows":\[\]},"exact":true,"note":"the prediction cannot be read: ' \
  "$out/m/diff/t6.json" || fail "t6's diff: $(cat "$out/m/diff/t6.json")"
grep -q '"missing":{"count":1,"rows":\[\[2,null\]\]},"extra":{"count":1,"rows":\[\[2,0.0\]\]}' \
  "$work/out03/m/diff/t1.json" || fail "2025-03 t1's diff: $(cat "$work/out03/m/diff/t1.json")"
printf 'x\n1\n' >"$work/sub/csv/t3.csv"
"$STREAMEX" score --bench "$bench" --method "m=$sub" --output "$out" >/dev/null
[ "$(ls "$out/m/diff")" = "t6.json" ] || fail "a fixed miss kept its diff: $(ls "$out/m/diff")"
printf 'x\n2\n' >"$work/sub/csv/t3.csv"

# Bad submissions: an error naming file and line, exit 2, nothing written.
expect_refusal() {
  local text="$1" want="$2"
  printf '%s\n' "$text" >"$work/bad.jsonl"
  if "$STREAMEX" score --bench "$bench" --method "b=$work/bad.jsonl" --output "$work/outb" \
    2>"$work/stderr"; then
    fail "accepted: $text"
  fi
  grep -q "bad.jsonl:$want" "$work/stderr" || fail "message for '$text': $(cat "$work/stderr")"
  [ ! -e "$work/outb/b/results.jsonl" ] || fail "wrote results for '$text'"
}
expect_refusal '{"task_id": "t9", "csv": null}' '1: task "t9" is not in task_ids.txt'
expect_refusal $'{"task_id": "t1", "csv": null}\n{"task_id": "t1", "csv": "x.csv"}' '2: task "t1" appears twice'
expect_refusal $'{"task_id": "t1", "csv": null}\nnot json' '2: not a JSON object'
expect_refusal '{"task_id": "t1"}' '1: field "csv" is missing'
if "$STREAMEX" score --bench "$bench" --method "m=$sub" --output "$work/o" --profile x 2>/dev/null; then
  fail "unknown profile accepted"
fi

# Hostile inputs: a NUL byte in the submission is refused with its line (the
# lines after it are not silently dropped); a FIFO or a device as a CSV is a
# mismatch saying why, at once (nothing blocks or grows); a FIFO as the
# submission is refused; a CSV over SX_MAX_CSV_BYTES is a mismatch naming the
# variable; a gold link out of gold/ is eval_error.
printf '{"task_id": "t1", "csv": null}\n{"task_id": "t2", "csv": "x\0y"}\n{"task_id": "t3", "csv": null}\n' \
  >"$work/nul.jsonl"
if "$STREAMEX" score --bench "$bench" --method "n=$work/nul.jsonl" --output "$work/outn" \
  2>"$work/stderr"; then
  fail "accepted a NUL byte"
fi
grep -qxF "streamex score: $work/nul.jsonl:2: a NUL byte at column 28 (a JSONL line is text)" \
  "$work/stderr" || fail "NUL message: $(cat "$work/stderr")"
[ ! -e "$work/outn" ] || fail "wrote an output despite the NUL byte"

mkfifo "$work/sub/csv/fifo.csv"
ln -s /dev/zero "$work/sub/csv/zero.csv"
printf 'x\n12\n' >"$work/sub/csv/big.csv"
mv "$bench/gold/t5.csv" "$work/t5.keep"
ln -s "$work/t5.keep" "$bench/gold/t5.csv"
{
  echo '{"task_id": "t3", "csv": "csv/fifo.csv"}'
  echo '{"task_id": "t4", "csv": "csv/zero.csv"}'
  echo '{"task_id": "t5", "csv": "csv/big.csv"}'
  echo '{"task_id": "t6", "csv": "csv/big.csv"}'
} >"$work/sub/hostile.jsonl"
SX_MAX_CSV_BYTES=4 timeout 20 "$STREAMEX" score --bench "$bench" \
  --method "h=$work/sub/hostile.jsonl" --output "$work/outh" >/dev/null ||
  fail "hostile CSVs: score exited $?"
detail_of() {
  python3 - "$work/outh/h/results.jsonl" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["task_id"] == sys.argv[2]:
        print(r["status"] + ": " + r["detail"])
EOF
}
[ "$(detail_of t3)" = "mismatch: cannot read prediction: $work/sub/csv/fifo.csv: a FIFO, not a regular file" ] ||
  fail "FIFO: $(detail_of t3)"
[ "$(detail_of t4)" = "mismatch: cannot read prediction: $work/sub/csv/zero.csv: a character device, not a regular file" ] ||
  fail "/dev/zero: $(detail_of t4)"
[ "$(detail_of t5)" = "eval_error: cannot read gold: $bench/gold/t5.csv: a link to $work/t5.keep, outside $bench/gold (links must stay inside the folder)" ] ||
  fail "gold link: $(detail_of t5)"
[ "$(detail_of t6)" = "mismatch: cannot read prediction: $work/sub/csv/big.csv: larger than the limit of 4 bytes for CSV files (set SX_MAX_CSV_BYTES to raise it)" ] ||
  fail "over the limit: $(detail_of t6)"
rm "$bench/gold/t5.csv"
mv "$work/t5.keep" "$bench/gold/t5.csv"
mkfifo "$work/fifo.jsonl"
timeout 20 "$STREAMEX" score --bench "$bench" --method "f=$work/fifo.jsonl" --output "$work/outf" \
  2>"$work/stderr" && fail "accepted a FIFO submission"
grep -qxF "streamex score: $work/fifo.jsonl: a FIFO, not a regular file" "$work/stderr" ||
  fail "FIFO submission: $(cat "$work/stderr")"

# Output folders that cannot be right are refused before any work.
expect_output_refused() {
  local out="$1" want="$2"
  if "$STREAMEX" score --bench "$bench" --method "m=$sub" --output "$out" 2>"$work/stderr" >&2; then
    fail "output '$out' accepted"
  fi
  grep -qxF "streamex score: $want" "$work/stderr" || fail "output '$out': $(cat "$work/stderr")"
}
expect_output_refused "" "the output path is empty"
# Near PATH_MAX (4096): fine for the folder itself, not for what goes in it.
long="$work"
while [ ${#long} -lt 3900 ]; do long="$long/$(printf 'd%.0s' $(seq 200))"; done
expect_output_refused "$long" \
  "output path of ${#long} bytes is too long (at most 3696, leaving room below PATH_MAX for the files written in it)"
expect_output_refused "$sub/out" "output $sub/out: $sub is not a folder"
[ ! -e "$work/$(printf 'd%.0s' $(seq 200))" ] || fail "created part of a too long output"

echo "cli_score: OK"
