#!/usr/bin/env bash
# tests/cli/terminal.sh: what `streamex run` shows on a terminal (under script(1),
# which gives it a pseudo-terminal): only the lines worth a look (a retry, a
# task settled on something other than a match, with its reason) scroll
# above the live progress line and never land inside it; routine lines (a
# task's match, a worker's goodbye) stay off the screen; the run ends with a
# table per method (EX, strict EX, each status that occurred), the wall time
# and the path of report.html. Off a terminal: every log line, JSON progress
# lines and no table. Exits 77 without script(1).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
command -v script > /dev/null || skip "no script(1) (util-linux)"
tmp=$(make_tmpdir)
bench="$SX_SOURCE_DIR/examples/sample-bench"

echo "== on a terminal: notable lines above the live line, a table at the end"
# sb05 fails with infra_error on every attempt: its retries are worth a look,
# and the run exits 3 (infrastructure failures left).
status=0
script -qec "'$STREAMEX' run --simulate delay_ms=20,infra_error=sb05_product_views --workers 2 \
    --bench '$bench' --method 'sample=$bench/predictions.jsonl' --output '$tmp/tty'" \
    "$tmp/tty.log" > /dev/null || status=$?
[ "$status" = 3 ] || fail "the run exited $status, expected 3 (infra_error left)"
# The screen as a terminal draws it: \r returns, ESC[K erases to the end.
python3 - "$tmp/tty.log" > "$tmp/screen.txt" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
data = data.split("\n", 1)[1]                      # script's own header line
data = data.rsplit("\nScript done", 1)[0]
line, cursor = [], 0
for token in re.findall(r"\x1b\[K|\r\n|.", data, re.S):
    if token == "\r\n" or token == "\n":
        print("".join(line)); line, cursor = [], 0
    elif token == "\r":
        cursor = 0
    elif token == "\x1b[K":
        del line[cursor:]
    else:
        line[cursor:cursor + 1] = [token]; cursor += 1
print("".join(line))
PY
for attempt in 1 2 3; do
    grep -Eq "warn  \[run\] worker w[01]: sample/sb05_product_views attempt $attempt: infra_error: simulated" "$tmp/screen.txt" ||
        fail "no line for attempt $attempt of sb05 on the screen: $(cat "$tmp/screen.txt")"
done
grep -q "note  \[run\] settled sample/sb05_product_views: infra_error after 3 attempt(s): simulated" \
    "$tmp/screen.txt" || fail "no settled line for sb05 on the screen"
! grep -q 'attempt 1: match' "$tmp/screen.txt" || fail "a routine match line on the screen"
! grep -q 'says goodbye' "$tmp/screen.txt" || fail "a routine goodbye on the screen"
if grep 'EX so far' "$tmp/screen.txt" | grep -q '\[run\]'; then
    fail "a log line landed in the live line: $(grep 'EX so far' "$tmp/screen.txt" | grep '\[run\]' | head -n 1)"
fi
grep -q '^\[30/30\] EX so far 0.9000' "$tmp/screen.txt" || fail "no final live line"
grep -Eq '^method +EX +strict EX +match missing_prediction infra_error$' "$tmp/screen.txt" ||
    fail "no table header: $(tail -n 5 "$tmp/screen.txt")"
ci='\[[01]\.[0-9]{4}, [01]\.[0-9]{4}\]'
grep -Eq "^sample +27/30 = 0\.9000 $ci +27/30 = 0\.9000 $ci +27 +2 +1\$" "$tmp/screen.txt" ||
    fail "no table row: $(tail -n 5 "$tmp/screen.txt")"
grep -qxF "report: $tmp/tty/report.html (open it in a browser, e.g. xdg-open $tmp/tty/report.html)" \
    "$tmp/screen.txt" || fail "no report path"
grep -qxF "output: $tmp/tty" "$tmp/screen.txt" || fail "no output folder"
grep -Eq '^wall time [0-9]+\.[0-9]{3} s$' "$tmp/screen.txt" || fail "no wall time"

echo "== off a terminal: every log line, JSON progress lines, the EX lines, no table"
"$STREAMEX" run --simulate delay_ms=5 --workers 2 --bench "$bench" \
    --method "sample=$bench/predictions.jsonl" --output "$tmp/pipe" > "$tmp/pipe.txt" \
    2> "$tmp/pipe.err"
grep -q 'info  \[run\] task sample/sb01_high_bids attempt 1: match' "$tmp/pipe.err" ||
    fail "no routine task line in the log: $(cat "$tmp/pipe.err")"
# Each in-process worker that hears the goodbye says which one it is.
! grep 'coordinator says goodbye' "$tmp/pipe.err" | grep -vq '\[run\] worker w[01]: coordinator' ||
    fail "a goodbye that does not name its worker: $(grep 'says goodbye' "$tmp/pipe.err")"
grep -q '^{"done":30,"total":30,' "$tmp/pipe.txt" || fail "no JSON progress line"
grep -Eqx "sample: EX = 28/30 = 0\.9333$SX_CI_RE" "$tmp/pipe.txt" || fail "no EX line"
! grep -Eq '^method +EX +strict EX' "$tmp/pipe.txt" || fail "a table off a terminal"
# The ending is there off a terminal too (cli/ending.h): where to look next.
grep -qx "report: .*/report.html (open it in a browser, e.g. xdg-open .*/report.html)" \
    "$tmp/pipe.txt" || fail "no report path off a terminal"
echo "cli_terminal: OK"
