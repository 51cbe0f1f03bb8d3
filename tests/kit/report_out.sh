# report_out.sh: sourced by tests/cli/report.sh and tests/cli/report_browser.sh (not a
# test itself). make_report_out OUT runs the sample bench with the simulated
# executor and two methods, so OUT/report.html has several statuses and a
# hostile candidate:
#   sample  the sample's own predictions (28/30: two have no line)
#   evil    every task's SQL carries markup that would run if the page did
#           not escape it (document.title = 'pwned'), and a /*sim:STATUS*/
#           marker cycling through six statuses
# It sets report_ids (the task IDs) and report_ex_sample / report_ex_evil
# ("correct/total = 0.xxxx" as summary.json has them).
make_report_out() {
    local out="$1" bench="$SX_SOURCE_DIR/examples/sample-bench"
    local preds="$out.evil.jsonl" i=0
    local cycle=(match mismatch flink_error timeout rejected_sql materialize_error)
    : > "$preds"
    while read -r id; do
        local kind=${cycle[$((i % ${#cycle[@]}))]}
        i=$((i + 1))
        printf '{"task_id": "%s", "sql": "SELECT 1 /*sim:%s*/ -- </script><img src=x onerror=\\"document.title=%s\\"><b>%s</b>"}\n' \
            "$id" "$kind" "'pwned'" "&amp;" >> "$preds"
    done < "$bench/task_ids.txt"
    "$STREAMEX" -q run --simulate delay_ms=5 --workers 2 --bench "$bench" \
        --method "sample=$bench/predictions.jsonl" --method "evil=$preds" \
        --output "$out" > "$out.stdout"
    report_ids=$(cat "$bench/task_ids.txt")
    report_ex_sample=$(ex_of "$out" sample)
    report_ex_evil=$(ex_of "$out" evil)
}

# "correct/total = 0.xxxx" of one method, from summary.json.
ex_of() {
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/summary.json"))["methods"][sys.argv[2]]; print("%d/%d = %.4f" % (m["correct"], m["total"], m["ex"]))' "$1" "$2"
}
