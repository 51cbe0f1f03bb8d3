#!/usr/bin/env bash
# tests/cli/check_hazards.sh: `streamex check` warns about a valid task whose
# streaming result depends on timing or differs from Flink BATCH
# (worker/check/hazards.h): a live source with event times before 1970, and a
# zero-delay watermark on an event time with ties. Warnings name the task
# and source, go to stderr, and leave the exit status 0. The fixture bench
# (tests/data/mini-bench) has neither; its clicks_top task has a zero-delay
# watermark, so a copy with a tied and a pre-1970 click gets both warnings.
# Then the engine hazards of a method's candidates (QUALIFY, an unbounded
# OVER aggregation, a Top-1 Rank): one warning a hazard per method, naming
# its candidates.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
work=$(make_tmpdir)

"$STREAMEX" check --bench "$SX_SOURCE_DIR/tests/data/mini-bench" >/dev/null 2>"$work/clean.err" ||
    fail "the fixture bench does not pass check"
! grep -q "^warning:" "$work/clean.err" || fail "warnings on the fixture: $(cat "$work/clean.err")"

cp -r "$SX_SOURCE_DIR/tests/data/mini-bench" "$work/bench"
clicks="$work/bench/tasks/clicks_top/sources/clicks.csv"
second=$(sed -n 2p "$clicks")
printf '%s\n-1000,u9,/old\n' "$second" >>"$clicks" # a tie, and 1969-12-31 23:59:59
# warnings COUNT ARGS...: `streamex check ARGS` exits 0 with exactly COUNT
# warnings on stderr ($work/err).
warnings() {
    local count="$1" code=0
    shift
    "$STREAMEX" check "$@" >"$work/out" 2>"$work/err" || code=$?
    [ "$code" = 0 ] || fail "check $*: exit $code with only warnings: $(cat "$work/err")"
    [ "$(grep -c '^warning:' "$work/err")" = "$count" ] ||
        fail "check $*: expected $count warning(s): $(cat "$work/err")"
}
# warned LINE: $work/err holds LINE, whole.
warned() {
    grep -qxF "warning: $1" "$work/err" || fail "no warning '$1': $(cat "$work/err")"
}

warnings 2 --bench "$work/bench"
warned "task clicks_top: source clicks: 1 of 6 event times are before 1970: Flink streaming drops interval-join matches of such rows and may lose their windows, so the result can differ from run to run and from batch"
warned "task clicks_top: source clicks: the watermark has zero delay and 1 rows share their event time (click_time) with an earlier row: rows equal to the watermark count as late, so the result depends on timing (give the watermark a delay)"

preds="$work/engine.jsonl"
cat >"$preds" <<'JSONL'
{"task_id": "join_max", "sql": "SELECT b.auction, a.seller, b.price FROM bids b JOIN auctions a ON b.auction = a.id QUALIFY ROW_NUMBER() OVER (PARTITION BY b.auction ORDER BY b.price DESC) = 1"}
{"task_id": "clicks_top", "sql": "SELECT user_id, COUNT(*) OVER (PARTITION BY user_id ORDER BY click_time) FROM clicks"}
{"task_id": "trades_tie", "sql": "SELECT symbol, volume FROM trades QUALIFY SUM(volume) OVER (PARTITION BY symbol ORDER BY volume ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) > 1 /* QUALIFY */"}
JSONL
mini="$SX_SOURCE_DIR/tests/data/mini-bench"
warnings 3 --bench "$mini" --method "m=$preds"
warned "method m: 2 candidate(s) (join_max, trades_tie) use QUALIFY: Flink 2.x accepts it, Flink 1.20 refuses it (a parse error), so the verdict depends on the engine"
warned "method m: 2 candidate(s) (clicks_top, trades_tie) use an OVER aggregation over an unbounded frame: Flink 2.x computes it with another operator by default (table.exec.unbounded-over.version 2) and accepts an ORDER BY that is not the time attribute, which Flink 1.20 refuses, so the result or the verdict can depend on the engine"
warned "method m: 1 candidate(s) (join_max) use a Top-1 ordered by something other than one time attribute: over an append-only input Flink 2.2.1 takes it for insert-only and never retracts a replaced row, where Flink 1.20 does, so the final relation can depend on the engine"
warnings 0 --bench "$mini" --method "m=$mini/predictions.jsonl"
echo "cli_check_hazards: OK"
