#!/usr/bin/env bash
# cli_terminal.sh: what `streamex run` shows on a terminal (under script(1),
# which gives it a pseudo-terminal): log lines scroll above the live progress
# line and never land inside it, and the run ends with a table per method
# (EX, strict EX, each status that occurred), the wall time and the path of
# report.html. Off a terminal: JSON progress lines and no table. Exits 77
# without script(1).
set -euo pipefail
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
command -v script > /dev/null || { echo "SKIP: no script(1) (util-linux)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
bench="$SX_SOURCE_DIR/examples/sample-bench"

echo "== on a terminal: log lines above the live line, a table at the end"
script -qec "'$STREAMEX' run --simulate delay_ms=20 --workers 2 --bench '$bench' \
    --method 'sample=$bench/predictions.jsonl' --output '$tmp/tty'" "$tmp/tty.log" > /dev/null
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
grep -q '\[run\] task sample/sb01_high_bids attempt 1: match' "$tmp/screen.txt" ||
    fail "no task log line on the screen: $(cat "$tmp/screen.txt")"
if grep 'EX so far' "$tmp/screen.txt" | grep -q '\[run\]'; then
    fail "a log line landed in the live line: $(grep 'EX so far' "$tmp/screen.txt" | grep '\[run\]' | head -n 1)"
fi
grep -q '^\[30/30\] EX so far 0.9333' "$tmp/screen.txt" || fail "no final live line"
grep -Eq '^method +EX +strict EX +match missing_prediction$' "$tmp/screen.txt" ||
    fail "no table header: $(tail -n 5 "$tmp/screen.txt")"
grep -Eq '^sample +28/30 = 0.9333 +28/30 = 0.9333 +28 +2$' "$tmp/screen.txt" ||
    fail "no table row: $(tail -n 5 "$tmp/screen.txt")"
grep -qx "report: $tmp/tty/report.html" "$tmp/screen.txt" || fail "no report path"
grep -Eq '^wall time [0-9]+\.[0-9]{3} s$' "$tmp/screen.txt" || fail "no wall time"

echo "== off a terminal: JSON progress lines, the EX lines, no table"
"$STREAMEX" -q run --simulate delay_ms=5 --bench "$bench" \
    --method "sample=$bench/predictions.jsonl" --output "$tmp/pipe" > "$tmp/pipe.txt"
grep -q '^{"done":30,"total":30,' "$tmp/pipe.txt" || fail "no JSON progress line"
grep -qx 'sample: EX = 28/30 = 0.9333' "$tmp/pipe.txt" || fail "no EX line"
! grep -q 'report:' "$tmp/pipe.txt" || fail "a table off a terminal"
echo "cli_terminal: OK"
