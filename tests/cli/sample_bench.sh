#!/usr/bin/env bash
# tests/cli/sample_bench.sh: the bundled sample benchmark without a runtime.
#  - tools/generate.py rebuilds every shipped file byte for byte (gold can be
#    audited and rebuilt; nobody edited an output by hand);
#  - `streamex check` accepts the bench and both predictions files;
#  - `streamex score` gives 30/30 to the oracle's own answers (gold, and one
#    legal answer of each tie task) and 0/30 to the same answers with their
#    last row dropped, so every gold file and evaluation spec is readable and
#    decisive under the project's comparator (both profiles).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
bench="$SX_SOURCE_DIR/examples/sample-bench"
work=$(make_tmpdir)

echo "-- the generator reproduces the shipped benchmark"
python3 "$bench/tools/generate.py" --out "$work/regen" >/dev/null
diff -r --exclude tools --exclude README.md --exclude __pycache__ "$work/regen" "$bench" ||
    fail "examples/sample-bench differs from what tools/generate.py writes"

echo "-- streamex check accepts it"
"$STREAMEX" check --bench "$bench" --method "sample=$bench/predictions.jsonl" \
    --method "reference=$bench/reference.jsonl" >"$work/check.out" 2>&1 ||
    fail "streamex check: $(cat "$work/check.out")"
grep -q "30 tasks" "$work/check.out" || fail "check summary: $(cat "$work/check.out")"
grep -q "method sample: 28 predictions, 2 missing" "$work/check.out" ||
    fail "check summary: $(cat "$work/check.out")"

echo "-- streamex score: the oracle's answers match, one row short does not"
python3 - "$bench" "$work" <<'EOF'
import csv, json, os, sys
bench, work = sys.argv[1], sys.argv[2]
for variant in ("right", "short"):
    os.makedirs("%s/%s" % (work, variant))
    with open("%s/%s.jsonl" % (work, variant), "w") as sub:
        for tid in open(bench + "/task_ids.txt").read().split():
            rows = list(csv.reader(open("%s/gold/%s.csv" % (bench, tid))))
            header, body = rows[0], rows[1:]
            policy = json.load(open("%s/evaluation/%s.json" % (bench, tid)))["answer_policy"]
            if policy["kind"] == "any_one_argmax":
                body = body[:1]
            elif policy["kind"] == "any_k_from_tie_set":
                body = body[:policy["k"]]
            if variant == "short":
                body = body[:-1]
            path = "%s/%s/%s.csv" % (work, variant, tid)
            with open(path, "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows([header] + body)
            sub.write(json.dumps({"task_id": tid, "csv": path}) + "\n")
EOF
"$STREAMEX" score --bench "$bench" --method "right=$work/right.jsonl" \
    --method "short=$work/short.jsonl" --output "$work/out" >"$work/score.out" 2>&1 ||
    fail "streamex score: $(cat "$work/score.out")"
grep -q "right: EX = 30/30" "$work/score.out" || fail "oracle answers: $(cat "$work/score.out")"
grep -q "short: EX = 0/30" "$work/score.out" || fail "short answers: $(cat "$work/score.out")"
# Gold holds NULLs (sb16, sb23): the earlier profile, which keeps NaN, agrees.
"$STREAMEX" score --bench "$bench" --method "right=$work/right.jsonl" \
    --output "$work/out-2025-03" --profile spider2-lite-2025-03 >"$work/score.out" 2>&1 ||
    fail "streamex score --profile spider2-lite-2025-03: $(cat "$work/score.out")"
grep -q "right: EX = 30/30" "$work/score.out" || fail "2025-03 profile: $(cat "$work/score.out")"
echo "cli_sample_bench: OK"
