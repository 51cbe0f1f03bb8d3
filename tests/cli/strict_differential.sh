#!/usr/bin/env bash
# tests/cli/strict_differential.sh: the strict EX verdict of `streamex score`
# against an independent brute-force reference
# (tests/ex_reference/strict_reference.py) on a seeded corpus of generated
# adversarial cases (tests/ex_reference/gen_cases.py), both profiles. Fails
# on any verdict the two do not share, or when the corpus is one-sided (fewer
# than 10% of the checked tasks strict 1 or strict 0).
# Env: SX_STRICTDIFF_COUNT (cases, default 2000), SX_STRICTDIFF_SEED (default 4242).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
count="${SX_STRICTDIFF_COUNT:-2000}"
seed="${SX_STRICTDIFF_SEED:-4242}"
refdir="$SX_SOURCE_DIR/tests/ex_reference"
python="$("$SX_SOURCE_DIR/scripts/setup-python.sh" | tail -n 1)"
work=$(make_tmpdir)

"$python" "$refdir/gen_cases.py" --out "$work/corpus" --count "$count" --seed "$seed" >/dev/null
status=0
for profile in spider2-lite-2025-11 spider2-lite-2025-03; do
  echo "== $profile"
  out="$work/out-$profile"
  "$STREAMEX" score --bench "$work/corpus" --method "m=$work/corpus/submission.jsonl" \
    --output "$out" --profile "$profile" >"$out.log" 2>&1 || { tail -n 20 "$out.log"; exit 1; }
  head -n 2 "$out.log"
  "$python" "$refdir/strict_reference.py" --bench "$work/corpus" \
    --results "$out/m/results.jsonl" --profile "$profile" || status=1
  ones="$(grep -c '"strict":1' "$out/m/results.jsonl" || true)"
  zeros="$(grep -c '"strict":0' "$out/m/results.jsonl" || true)"
  if [ "$ones" -lt $((count / 10)) ] || [ "$zeros" -lt $((count / 10)) ]; then
    echo "one-sided corpus: $ones strict 1, $zeros strict 0"
    status=1
  fi
done
exit "$status"
