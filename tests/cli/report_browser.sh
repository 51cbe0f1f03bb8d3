#!/usr/bin/env bash
# tests/cli/report_browser.sh: OUT/report.html of a simulated sample run in
# headless Chromium (Debian's chromium package): the page loads with no
# console message, its script runs to the end, the DOM shows each method's
# EX and every task ID, #task=ID opens that task's view, the hostile
# candidate's markup never runs, and a screenshot is not blank. Exits 77
# when no Chromium can run here.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
tmp=$(make_tmpdir)
source "$SX_SOURCE_DIR/tests/kit/report_out.sh"

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || skip "no chromium (apt-get install chromium)"
# Its own profile folder: nothing is read from or left in the user's.
chrome() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 "$@"
}
if ! chrome --dump-dom about:blank > /dev/null 2> "$tmp/probe.err"; then
    skip "chromium cannot start here: $(tail -n 3 "$tmp/probe.err")"
fi

out="$tmp/run"
make_report_out "$out"
url="file://$out/report.html"
first=$(echo "$report_ids" | head -n 1)
last=$(echo "$report_ids" | tail -n 1)

echo "== the page loads, its script runs whole, with no console message"
chrome --dump-dom "$url#task=$last" > "$tmp/dom.html" 2> "$tmp/console.txt"
if grep -q 'CONSOLE' "$tmp/console.txt"; then
    fail "console: $(grep 'CONSOLE' "$tmp/console.txt")"
fi
grep -q '<body data-ready="1">' "$tmp/dom.html" || fail "the script did not run to its end"
grep -q '<html lang="en" class="js">' "$tmp/dom.html" || fail "the script did not start"

echo "== the DOM shows each method's EX and every task ID"
for ex in "$report_ex_sample" "$report_ex_evil"; do
    grep -qF ">$ex</td>" "$tmp/dom.html" || fail "no EX '$ex' in the DOM"
done
for id in $report_ids; do
    grep -qF ">$id</a>" "$tmp/dom.html" || fail "no task $id in the DOM"
done

echo "== #task=ID opens that task's view, and only that one"
[ "$(grep -c '<article class="task open"' "$tmp/dom.html")" = 1 ] || fail "not one open task"
grep -qF "<article class=\"task open\" id=\"task=$last\">" "$tmp/dom.html" ||
    fail "task $last is not the open one"
chrome --dump-dom "$url#task=$first" 2> /dev/null |
    grep -qF "<article class=\"task open\" id=\"task=$first\">" || fail "task $first does not open"

echo "== the hostile candidate's markup stays text"
grep -q '<title>streamex report</title>' "$tmp/dom.html" || fail "the title was changed"
! grep -q 'pwned</title>\|<img' "$tmp/dom.html" || fail "markup from a candidate ran"

echo "== a screenshot of the overview is not blank"
# Headless Chromium paints nothing when a fragment scrolls the page, so
# the screenshot is of the top of the page.
chrome --window-size=1280,900 --hide-scrollbars --screenshot="$tmp/shot.png" "$url" \
    > /dev/null 2>&1 || fail "no screenshot"
python3 - "$tmp/shot.png" <<'PY' || fail "blank screenshot"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
step = {2: 3, 6: 4}[colour]
stride = width * step + 1
# Pixels as stored (after PNG's per-row filter, unreversed): a blank page
# stores one or two distinct values, a page of text and colours hundreds.
colours = set()
for y in range(0, height, 4):           # every 4th row, past its filter byte
    row = raw[y * stride + 1:(y + 1) * stride]
    for x in range(0, len(row), step * 4):
        colours.add(row[x:x + step])
print("distinct stored pixel values sampled:", len(colours))
sys.exit(0 if len(colours) >= 20 else 1)
PY
echo "cli_report_browser: OK"
