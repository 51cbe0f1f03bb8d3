#!/usr/bin/env bash
# tests/cli/figures.sh: the statistics in the outputs, wired end to end
# through `streamex score` and `streamex compare` on a 400-task bench made
# here, with two methods whose verdicts per task are chosen (figures.py's
# table of kinds): summary.json's counts, ex_diff and McNemar p of the pair
# against scipy's binomtest, every interval against a numpy bootstrap of the
# same verdicts (within 0.01), run.bootstrap; --bootstrap 0 leaving the
# intervals out; the same seed printing the same bounds; merge computing
# them again over merged outputs; compare on two
# score outputs (the same figures, every task that differs with the reason,
# a final relation that differs under the same verdict, the task's
# ignore_order honoured), its refusals (different benches, with the exact
# message; a folder of two methods without :METHOD) and its table.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
work=$(make_tmpdir)
here="$SX_SOURCE_DIR/tests/cli"

python="$("$SX_SOURCE_DIR/scripts/setup-python.sh" | tail -n 1)" ||
  skip_unless_ci "no pinned Python venv (scripts/setup-python.sh failed)"

echo "== a bench of 400 tasks, methods A and B with chosen verdicts"
"$python" "$here/figures.py" make "$work" >"$work/kinds.txt"
bench="$work/bench"
"$STREAMEX" score --bench "$bench" --method "A=$work/A.jsonl" --method "B=$work/B.jsonl" \
  --output "$work/both" >"$work/both.txt" || fail "score exited $?: $(cat "$work/both.txt")"

echo "== summary.json: counts, ex_diff and McNemar exact, intervals as numpy's bootstrap"
"$python" "$here/figures.py" summary "$work" "$work/both/summary.json" 10000 1 ||
  fail "summary.json's statistics (above)"
# The printed EX lines and the ending carry the intervals summary.json holds.
"$python" - "$work/both/summary.json" "$work/both.txt" <<'PY' || fail "printed intervals"
import json, sys
s = json.load(open(sys.argv[1]))["methods"]
text = open(sys.argv[2]).read().splitlines()
for name, m in s.items():
    ex = "%s: EX = %d/%d = %.4f, 95%% CI [%.4f, %.4f]" % (
        name, m["correct"], m["total"], m["ex"], *m["ex_ci"])
    strict = "%s: strict EX = %d/%d = %.4f, 95%% CI [%.4f, %.4f] (" % (
        name, m["strict_correct"], m["total"], m["ex_strict"], *m["ex_strict_ci"])
    assert ex in text, ex
    assert any(line.startswith(strict) for line in text), strict
    ending = "  %s; strict EX = %.4f" % (ex, m["ex_strict"])
    assert ending in text, ending
PY

echo "== the same seed, the same bounds; --seed and --bootstrap reach summary.json"
for i in 1 2; do
  "$STREAMEX" score --bench "$bench" --method "A=$work/A.jsonl" --method "B=$work/B.jsonl" \
    --output "$work/seed7-$i" --seed 7 --bootstrap 2000 >"$work/seed7-$i.txt"
done
diff <(grep 'EX = ' "$work/seed7-1.txt") <(grep 'EX = ' "$work/seed7-2.txt") ||
  fail "two runs with seed 7 printed different bounds"
"$python" "$here/figures.py" summary "$work" "$work/seed7-1/summary.json" 2000 7 ||
  fail "summary.json with --bootstrap 2000 --seed 7 (above)"

echo "== --bootstrap 0: no interval anywhere, the comparisons without theirs"
"$STREAMEX" score --bench "$bench" --method "A=$work/A.jsonl" --method "B=$work/B.jsonl" \
  --output "$work/off" --bootstrap 0 >"$work/off.txt"
! grep -q '_ci\|"bootstrap"' "$work/off/summary.json" ||
  fail "--bootstrap 0 left an interval: $(grep '_ci\|bootstrap' "$work/off/summary.json")"
! grep -q 'CI' "$work/off.txt" || fail "--bootstrap 0 printed an interval"
grep -qx 'A: EX = 236/400 = 0.5900' "$work/off.txt" || fail "A's EX line: $(cat "$work/off.txt")"
"$python" - "$work/off/summary.json" "$work/both/summary.json" <<'PY' || fail "comparisons"
import json, sys
off, on = (json.load(open(p))["comparisons"] for p in sys.argv[1:])
for c in on:
    del c["ex_diff_ci"]
assert off == on, (off, on)
PY

echo "== refused: a bootstrap past its bound, a seed that is no integer"
while IFS='|' read -r option value range; do
  status=0
  "$STREAMEX" score --bench "$bench" --method "A=$work/A.jsonl" --output "$work/bad" \
    "$option" "$value" >/dev/null 2>"$work/bad.err" || status=$?
  [ "$status" = 2 ] || fail "$option $value: exit $status"
  [ "$(head -n 1 "$work/bad.err")" = "streamex score: $option '$value': expected an integer in $range" ] ||
    fail "$option $value: $(head -n 1 "$work/bad.err")"
done <<'EOF'
--bootstrap|1000001|[0, 1000000]
--bootstrap|-1|[0, 1000000]
--seed|x|[0, 9223372036854775807]
EOF

echo "== compare: two score outputs, the same figures and every task that differs"
"$STREAMEX" score --bench "$bench" --method "A=$work/A.jsonl" --output "$work/a" >/dev/null
"$STREAMEX" score --bench "$bench" --method "B=$work/B.jsonl" --output "$work/b" >/dev/null
"$STREAMEX" compare "$work/a" "$work/b" --json >"$work/compare.json" 2>"$work/compare.err" ||
  fail "compare exited $?: $(cat "$work/compare.err")"
"$python" "$here/figures.py" compare "$work" "$work/compare.json" \
  "$work/both/summary.json" "$work/a" "$work/b" || fail "compare --json (above)"
# OUT:METHOD of one folder with both methods: the same JSON but for the labels.
"$STREAMEX" compare "$work/both:A" "$work/both:B" --json >"$work/compare2.json"
"$python" - "$work/compare.json" "$work/compare2.json" <<'PY' || fail "OUT:METHOD"
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:])
assert two["comparisons"][0]["a"].endswith("/both:A"), two["comparisons"][0]
for doc in (one, two):
    for c in doc["comparisons"]:
        del c["a"], c["b"]
    for side in ("a", "b"):
        del doc[side]["out"]
    for t in doc["differing"]:
        for side in ("a", "b"):
            del t[side]["csv"]
assert one == two
PY

echo "== merge computes them again: two outputs of one method each, merged"
"$STREAMEX" merge --bench "$bench" "$work/a" "$work/b" --output "$work/merged" >/dev/null ||
  fail "merge exited $?"
"$python" - "$work/merged/summary.json" "$work/both/summary.json" <<'PY' || fail "merge's figures"
import json, sys
merged, both = (json.load(open(p)) for p in sys.argv[1:])
assert merged["comparisons"] == both["comparisons"], (merged["comparisons"], both["comparisons"])
for name in ("A", "B"):
    for key in ("ex_ci", "ex_strict_ci"):
        assert merged["methods"][name][key] == both["methods"][name][key], (name, key)
assert merged["run"]["bootstrap"] == {"resamples": 10000, "seed": 1}, merged["run"]
PY

echo "== compare's table"
"$STREAMEX" compare "$work/a" "$work/b" --seed 7 --bootstrap 2000 >"$work/table.txt"
"$python" - "$work/table.txt" "$work/seed7-1/summary.json" "$work/a" "$work/b" <<'PY' ||
import json, sys
text = open(sys.argv[1]).read().splitlines()
cmp = json.load(open(sys.argv[2]))["comparisons"]
a, b = sys.argv[3], sys.argv[4]
assert text[0] == "A: %s:A: EX = 236/400 = 0.5900, strict EX = 228/400 = 0.5700" % a, text[0]
assert text[1] == "B: %s:B: EX = 201/400 = 0.5025, strict EX = 197/400 = 0.4925" % b, text[1]
assert text[2].endswith("400 task IDs; 95% CI: paired bootstrap, 2000 resamples, seed 7")
for line, c in zip(text[5:7], cmp):
    words = line.split()
    name = "strict EX" if c.get("strict") else "EX"
    assert line.startswith(name + " "), line
    ci = "[%+.4f, %+.4f]" % tuple(c["ex_diff_ci"])
    want = [str(c["both"]), str(c["only_a"]), str(c["only_b"]), str(c["neither"]),
            "%+.4f" % c["ex_diff"]] + ci.split() + ["%.4g" % c["mcnemar_p"]]
    assert words[len(name.split()):] == want, (words, want)
assert text[8] == "126 task(s) whose verdict, status or final relation differs:", text[8]
PY
  fail "compare's table: $(head -n 12 "$work/table.txt")"

echo "== several samples per task: pass@k, maj@3, the mean's interval, the pair by signs"
"$python" "$here/figures.py" samples "$work"
"$STREAMEX" score --bench "$work/sbench" --method "S=$work/S.jsonl" --method "O=$work/O.jsonl" \
  --output "$work/samples" >"$work/samples.txt" || fail "score of samples exited $?"
"$STREAMEX" compare "$work/samples:S" "$work/samples:O" --json >"$work/scompare.json"
"$python" "$here/figures.py" samples-check "$work" "$work/samples/summary.json" \
  "$work/scompare.json" || fail "several samples (above)"
# The printed pass@k and maj@3 are summary.json's.
"$python" - "$work/samples/summary.json" "$work/samples.txt" <<'PY' || fail "pass@k line"
import json, sys
m = json.load(open(sys.argv[1]))["methods"]["S"]
p = m["pass_at_k"]
want = "S: pass@1 = %.4f, pass@2 = %.4f, pass@3 = %.4f; maj@3 = %.4f" % (
    p["1"], p["2"], p["3"], m["maj_at_n"])
assert want in open(sys.argv[2]).read().splitlines(), want
PY

echo "== compare refuses two benches, names both; a folder of two methods needs :METHOD"
cp -r "$bench" "$work/bench2"
printf 'k,v\n1,x\n' >"$work/bench2/gold/t001.csv"
"$STREAMEX" score --bench "$work/bench2" --method "B=$work/B.jsonl" --output "$work/c" >/dev/null
fp() { "$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["bench_fingerprint"])' "$1/summary.json"; }
status=0
"$STREAMEX" compare "$work/a" "$work/c" >"$work/refused.txt" 2>"$work/refused.err" || status=$?
[ "$status" = 2 ] || fail "different benches: exit $status"
[ ! -s "$work/refused.txt" ] || fail "different benches: printed $(cat "$work/refused.txt")"
want="streamex compare: $work/a and $work/c are outputs of different benches: $work/a ran $bench (fingerprint $(fp "$work/a")), $work/c ran $work/bench2 (fingerprint $(fp "$work/c"))"
[ "$(cat "$work/refused.err")" = "$want" ] || fail "refusal: $(cat "$work/refused.err")"
status=0
"$STREAMEX" compare "$work/both" "$work/b" 2>"$work/two.err" >/dev/null || status=$?
[ "$status" = 2 ] || fail "two methods without :METHOD: exit $status"
grep -qxF "streamex compare: $work/both holds 2 methods (A, B): name one as $work/both:METHOD" \
  "$work/two.err" || fail "two methods: $(cat "$work/two.err")"
status=0
"$STREAMEX" compare "$work/both:C" "$work/b" 2>"$work/none.err" >/dev/null || status=$?
[ "$status" = 2 ] && grep -qxF "streamex compare: $work/both has no method 'C' (its methods: A, B)" \
  "$work/none.err" || fail "unknown method: $status $(cat "$work/none.err")"
status=0
"$STREAMEX" compare "$work/a" 2>"$work/one.err" >/dev/null || status=$?
[ "$status" = 2 ] && grep -q "expected two outputs" "$work/one.err" || fail "one output: $status"
echo "cli_figures: OK"
