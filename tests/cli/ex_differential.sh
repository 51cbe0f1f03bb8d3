#!/usr/bin/env bash
# tests/cli/ex_differential.sh: the EX differential test. Checks the pandas 2.x
# reference (tests/ex_reference/reference.py) against hand-written verdicts,
# then scores two corpora with `streamex score` and with the reference under
# both profiles: the hand-written cases and a seeded corpus of generated
# adversarial cases (tests/ex_reference/gen_cases.py). Fails on any verdict
# the two do not share, or when a corpus is too one-sided to prove anything
# (under 20% match or under 20% mismatch). bench/ex_bench.py runs the same
# comparison on a larger corpus.
# Env: SX_EXDIFF_COUNT (generated cases, default 3000), SX_EXDIFF_SEED
# (default 20251); SX_EXDIFF_KEEP=1 keeps the work folder.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
count="${SX_EXDIFF_COUNT:-3000}"
seed="${SX_EXDIFF_SEED:-20251}"
refdir="$SX_SOURCE_DIR/tests/ex_reference"

# The pinned pandas venv; a no-op when scripts/setup-python.sh already ran.
python="$("$SX_SOURCE_DIR/scripts/setup-python.sh" | tail -n 1)"

[ "${SX_EXDIFF_KEEP:-0}" != 1 ] || SX_TEST_KEEP=1
work=$(make_tmpdir)

echo "== the reference against hand-written verdicts"
"$python" "$refdir/hand_cases.py" check

"$python" "$refdir/hand_cases.py" write --out "$work/hand"
"$python" "$refdir/gen_cases.py" --out "$work/generated" --count "$count" --seed "$seed"

status=0
for corpus in hand generated; do
  for profile in spider2-lite-2025-11 spider2-lite-2025-03; do
    echo "== $corpus corpus, $profile"
    bench="$work/$corpus"
    out="$work/out-$corpus-$profile"
    if ! "$STREAMEX" score --bench "$bench" --method "m=$bench/submission.jsonl" \
      --output "$out/sx" --profile "$profile" >"$out.log" 2>&1; then
      echo "streamex score failed:"
      tail -n 20 "$out.log"
      status=1
      continue
    fi
    "$python" "$refdir/reference.py" --bench "$bench" --method "m=$bench/submission.jsonl" \
      --output "$out/ref" --profile "$profile"
    "$python" "$refdir/diff.py" --bench "$bench" --profile "$profile" \
      --reference "$out/ref/m/results.jsonl" --streamex-results "$out/sx/m/results.jsonl" \
      --streamex "$STREAMEX" --min-share 0.2 || status=1
  done
done
exit "$status"
