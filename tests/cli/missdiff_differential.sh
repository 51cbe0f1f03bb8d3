#!/usr/bin/env bash
# tests/cli/missdiff_differential.sh: the row-level diff of every miss
# (OUT/NAME/diff/ID.json, written by `streamex score`) against an independent
# reference (tests/ex_reference/missdiff_reference.py: pandas reading, Kuhn
# matchings, brute-force column choice) on the hand-written cases and a
# seeded corpus of generated adversarial cases (gen_cases.py), both
# profiles. Fails on any disagreement (which tasks have a diff, their
# columns, counts, listed rows, first differing position, tie rule), or when
# the generated corpus is one-sided: fewer than 10% of its diffs with
# missing rows or with extra rows, under 2% tie tasks, or a way of choosing
# columns (strict, name, values) never taken. The exact JSON of hand cases is
# checked by common/ex/diff.c's self-test (test_score).
# Env: SX_MISSDIFF_COUNT (cases, default 1500), SX_MISSDIFF_SEED (default 4040).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
count="${SX_MISSDIFF_COUNT:-1500}"
seed="${SX_MISSDIFF_SEED:-4040}"
refdir="$SX_SOURCE_DIR/tests/ex_reference"
python="$("$SX_SOURCE_DIR/scripts/setup-python.sh" | tail -n 1)"
work=$(make_tmpdir)

"$python" "$refdir/hand_cases.py" write --out "$work/hand" >/dev/null
"$python" "$refdir/gen_cases.py" --out "$work/generated" --count "$count" --seed "$seed" >/dev/null
status=0
for corpus in hand generated; do
  for profile in spider2-lite-2025-11 spider2-lite-2025-03; do
    echo "== $corpus corpus, $profile"
    out="$work/out-$corpus-$profile"
    "$STREAMEX" score --bench "$work/$corpus" --method "m=$work/$corpus/submission.jsonl" \
      --output "$out" --profile "$profile" >"$out.log" 2>&1 || { tail -n 20 "$out.log"; exit 1; }
    "$python" "$refdir/missdiff_reference.py" --bench "$work/$corpus" --out "$out/m" \
      --profile "$profile" | tee "$out.ref" || status=1
    [ "$corpus" = generated ] || continue
    # "N diffs checked (M with missing rows, E with extra rows, T tie tasks;
    # columns by strict S, name A, values V)"
    read -r checked missing extra ties strict named valued < <(sed -n \
      's/.*: \([0-9]*\) diffs checked (\([0-9]*\) with missing rows, \([0-9]*\) with extra rows, \([0-9]*\) tie tasks; columns by strict \([0-9]*\), name \([0-9]*\), values \([0-9]*\)).*/\1 \2 \3 \4 \5 \6 \7/p' \
      "$out.ref")
    if [ -z "${checked:-}" ] || [ "$missing" -lt $((checked / 10)) ] ||
      [ "$extra" -lt $((checked / 10)) ] || [ "$ties" -lt $((checked / 50)) ] ||
      [ "$strict" -lt 1 ] || [ "$named" -lt 1 ] || [ "$valued" -lt 1 ]; then
      echo "one-sided corpus: $(tail -n 1 "$out.ref")"
      status=1
    fi
  done
done
exit "$status"
