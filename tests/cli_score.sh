#!/usr/bin/env bash
# cli_score.sh: `streamex score` end to end on a small bench made here:
# every task ID scored once in task_ids.txt order, missing lines and null
# CSVs kept in the denominator, relative CSV paths taken from the submission's
# folder, unreadable predictions scored 0, both profiles, the tie adapter,
# and bad submissions refused with the file and line named.
set -euo pipefail
: "${STREAMEX:?}"
work="$(mktemp -d "${TMPDIR:-/tmp}/sx-cli-score.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

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
grep -qx 'm: EX = 3/7 = 0.4286' "$work/stdout" || fail "EX line: $(cat "$work/stdout")"
ids="$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["task_id"] for l in open(sys.argv[1])))' "$out/m/results.jsonl")"
[ "$ids" = "t1 t2 t3 t4 t5 t6 t7" ] || fail "results order: $ids"
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
grep -qx 'm: EX = 2/7 = 0.2857' "$work/stdout03" || fail "2025-03: $(cat "$work/stdout03")"

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
echo "cli_score: OK"
