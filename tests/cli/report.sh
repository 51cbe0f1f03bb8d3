#!/usr/bin/env bash
# tests/cli/report.sh: OUT/report.html (common/report/report.h) from the command line:
# written at the end of run, score and merge; holds every task ID and each
# method's EX with its full denominator; escapes hostile candidate SQL and
# CSV fields; `streamex report OUT` writes the same page again from OUT
# alone, and refuses an OUT without summary.json. The page in a real
# browser: tests/cli/report_browser.sh.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
tmp=$(make_tmpdir)
source "$SX_SOURCE_DIR/tests/kit/report_out.sh"

echo "== run writes report.html: every task, each method's EX, the run's facts"
out="$tmp/run"
make_report_out "$out"
page="$out/report.html"
[ -s "$page" ] || fail "no $page"
[ "$report_ex_sample" = "28/30 = 0.9333" ] || fail "sample EX is $report_ex_sample"
[ "$report_ex_evil" = "5/30 = 0.1667" ] || fail "evil EX is $report_ex_evil"
for ex in "$report_ex_sample" "$report_ex_evil"; do
    grep -qF ">$ex</td>" "$page" || fail "no EX '$ex' on the page"
done
for id in $report_ids; do
    grep -qF "<article class=\"task\" id=\"task=$id\">" "$page" || fail "no task view of $id"
    grep -qF "<a href=\"#task=$id\">$id</a>" "$page" || fail "no grid row of $id"
done
[ "$(grep -c '<article class="task"' "$page")" = 30 ] || fail "not 30 task views"
grep -qF '<tr><th>command</th><td>run</td></tr>' "$page" || fail "command"
grep -qF "<tr><th>bench</th><td>$SX_SOURCE_DIR/examples/sample-bench</td></tr>" "$page" ||
    fail "bench path"
grep -qF '<tr><th>workers</th><td>w0, w1 (2)</td></tr>' "$page" || fail "workers"
grep -qF '<tr><th>runtime</th><td>simulated (no Kafka, no Flink) (w0, w1)</td></tr>' "$page" ||
    fail "what the workers run on: $(grep -o '<tr><th>runtime</th>[^\n]*</tr>' "$page" | head -c 300)"
grep -qF '<tr><th>engine</th><td>simulated</td></tr>' "$page" || fail "the engine of the results"
workers=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["run"].get("workers")))' "$out/summary.json")
[ "$workers" = '{"w0": "simulated (no Kafka, no Flink)", "w1": "simulated (no Kafka, no Flink)"}' ] ||
    fail "run.workers in summary.json is $workers"
# The bench fingerprint, computed here on its own from its definition
# (common/bench/task.h): SHA-1 of "HASH PATH" lines, task_ids.txt then each task's
# files in byte order (a missing gold or evaluation named as missing).
fingerprint() {
    python3 - "$1" <<'PY'
import hashlib, os, sys
bench = sys.argv[1]
def line(rel):
    path = os.path.join(bench, rel)
    if not os.path.exists(path):
        return "missing %s\n" % rel
    return "%s %s\n" % (hashlib.sha1(open(path, "rb").read()).hexdigest(), rel)
def tree(rel):
    if not os.path.isdir(os.path.join(bench, rel)):
        return
    for name in sorted(os.listdir(os.path.join(bench, rel))):
        child = rel + "/" + name
        if name.startswith("."):
            continue
        if os.path.isdir(os.path.join(bench, child)):
            yield from tree(child)
        else:
            yield line(child)
text = line("task_ids.txt")
for tid in open(os.path.join(bench, "task_ids.txt")).read().split():
    text += "".join(tree("tasks/" + tid))
    text += line("gold/%s.csv" % tid) + line("evaluation/%s.json" % tid)
print(hashlib.sha1(text.encode()).hexdigest())
PY
}
sample_fingerprint=$(fingerprint "$SX_SOURCE_DIR/examples/sample-bench")
grep -qF "<tr><th>bench fingerprint (SHA-1)</th><td>$sample_fingerprint</td></tr>" "$page" ||
    fail "bench fingerprint is not $sample_fingerprint: $(grep -o 'bench fingerprint[^\n]*</tr>' "$page" | head -c 200)"
grep -qF "\"bench_fingerprint\": \"$sample_fingerprint\"" "$out/summary.json" ||
    fail "no bench_fingerprint in summary.json"
grep -qF 'List every bid of more than 50.00' "$page" || fail "the question of sb01"
grep -qF 'SELECT bid_id, auction, price FROM bids WHERE price &gt;= 50' "$page" ||
    fail "the candidate SQL of sample/sb01"

echo "== each executed task's step times: in results.jsonl, the task view and the run's total"
# The simulated executor spends delay_ms (5) in the run step of every task
# with a candidate: 28 of sample's and all 30 of evil's, 58 in all.
steps='"steps":{"prepare":0.0,"replay":0.0,"submit":0.0,"run":0.005,"materialize":0.0,"score":0.0,"cleanup":0.0}'
grep -F '"task_id":"sb01_high_bids"' "$out/sample/results.jsonl" | grep -qF "$steps" ||
    fail "no steps for sb01: $(grep sb01 "$out/sample/results.jsonl")"
[ "$(grep -cF "$steps" "$out/sample/results.jsonl")" = 28 ] || fail "not 28 sample lines with steps"
! grep '"missing_prediction"' "$out/sample/results.jsonl" | grep -q steps ||
    fail "steps for a task that was never executed"
grep -qF '<tr><th>steps (s)</th><td>prepare 0.000 &middot; replay 0.000 &middot; submit 0.000 &middot; run 0.005 &middot; materialize 0.000 &middot; score 0.000 &middot; cleanup 0.000</td></tr>' \
    "$page" || fail "no step times in a task view"
grep -qF '<tr><td>run</td><td class="num">0.290</td><td class="num">100.0%</td><td class="num">0.005</td></tr>' \
    "$page" || fail "the run step's total is not 58 x 0.005 s: $(grep -o '<tr><td>run</td>[^\n]*</tr>' "$page" | head -n 1)"
grep -qF 'over 58 executed task(s)' "$page" || fail "not 58 executed tasks"

echo "== hostile candidate SQL is shown as text, never as markup"
grep -qF -- '-- &lt;/script&gt;&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;&lt;b&gt;&amp;amp;&lt;/b&gt;' \
    "$page" || fail "the evil SQL is not there escaped"
! grep -q '<img' "$page" || fail "an <img> tag reached the page"
! grep -q '<b>' "$page" || fail "a <b> tag reached the page"
[ "$(grep -c '<script' "$page")" = 2 ] || fail "more than the page's own two scripts"

echo "== streamex report OUT writes the same page again from OUT alone"
cp "$page" "$tmp/first.html"
rm "$page"
[ "$("$STREAMEX" report "$out")" = "$out/report.html" ] || fail "report's output line"
cmp -s "$page" "$tmp/first.html" || fail "report wrote another page than run"
"$STREAMEX" report "$tmp/nowhere" 2> "$tmp/err" && fail "report of a missing OUT"
grep -q "summary.json" "$tmp/err" || fail "error does not name summary.json: $(cat "$tmp/err")"
"$STREAMEX" report 2> /dev/null && fail "report without OUT"
"$STREAMEX" report --help | grep -q 'report.html' || fail "--help"

echo "== score writes it too: CSV fields with markup are escaped"
bench="$tmp/bench"
mkdir -p "$bench/gold" "$bench/evaluation" "$tmp/sub"
printf 'x1\n' > "$bench/task_ids.txt"
echo '{"ignore_order": true}' > "$bench/evaluation/x1.json"
printf 'name\n"<script>alert(1)</script>"\n' > "$bench/gold/x1.csv"
printf 'name\n"</td><img src=y onerror=alert(2)>"\n' > "$tmp/sub/x1.csv"
echo '{"task_id": "x1", "csv": "x1.csv"}' > "$tmp/sub/submission.jsonl"
"$STREAMEX" -q score --bench "$bench" --method "m=$tmp/sub/submission.jsonl" \
    --output "$tmp/score" > /dev/null
page="$tmp/score/report.html"
grep -qF '>0/1 = 0.0000</td>' "$page" || fail "score report EX"
grep -qF '<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>' "$page" || fail "gold field"
grep -qF '<td>&lt;/td&gt;&lt;img src=y onerror=alert(2)&gt;</td>' "$page" || fail "CSV field"
grep -qF '<th class="unmatched"' "$page" || fail "the unmatched gold column is not marked"
! grep -q '<img' "$page" || fail "an <img> tag reached the score page"
grep -qF 'no step times: no task was executed by a worker here' "$page" ||
    fail "a score-only report claims step times"
grep -qF "<tr><th>bench fingerprint (SHA-1)</th><td>$(fingerprint "$bench")</td></tr>" "$page" ||
    fail "score's bench fingerprint"

echo "== merge writes it for the merged OUT"
sample="$SX_SOURCE_DIR/examples/sample-bench"
for i in 0 1; do
    "$STREAMEX" -q run --simulate delay_ms=5 --bench "$sample" \
        --method "sample=$sample/predictions.jsonl" --shard "$i/2" --output "$tmp/s$i" > /dev/null
done
"$STREAMEX" merge --bench "$sample" "$tmp/s0" "$tmp/s1" --output "$tmp/merged" \
    > /dev/null 2> "$tmp/merge.log"
# Nothing to warn about: complete shards, a report written.
! grep -E '^[^ ]+ (warn|error) ' "$tmp/merge.log" || fail "merge warned"
grep -qF '>28/30 = 0.9333</td>' "$tmp/merged/report.html" || fail "merged report EX"
[ "$(grep -cF "$steps" "$tmp/merged/sample/results.jsonl")" = 28 ] ||
    fail "merge lost the step times"
grep -qF "<tr><th>bench fingerprint (SHA-1)</th><td>$sample_fingerprint</td></tr>" \
    "$tmp/merged/report.html" || fail "merge's bench fingerprint"
grep -qF '<tr><th>runtime</th><td>simulated (no Kafka, no Flink) (w0, w1)</td></tr>' \
    "$tmp/merged/report.html" || fail "merge's runtime of the shards' workers"
echo "cli_report: OK"
