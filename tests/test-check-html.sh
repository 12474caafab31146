#!/bin/bash
# The HTML report and the trace, looked at as a person would: headless
# Chromium opens report.html from file:// (a real boot with the vanish
# fault, the acceptance command; a clean synthetic run; a synthetic run of
# a million records). No console message may appear; the DOM must show the
# verdict and one row per run of report.json; the screenshot's disk map
# must show the lost colour at the cell of a lost sector (and nowhere on
# the clean run's map). The trace of the real log must parse and hold one
# event per record, and the guest's MARKs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools chromium /usr/bin/python3 timeout
MKBIGRUN=$TOP/tests/tools/mkbigrun
require_built "$MKBIGRUN"
plan 15

# The page's colour of the class lost (checker/lib/html/report.js).
LOST_RGB="214,39,40"
WINDOW=1280,2400

# chrome NAME ARGS... URL: headless Chromium, its stderr in $T/NAME.chrome.
chrome () {
  local name=$1; shift
  DBUS_SESSION_BUS_ADDRESS=disabled: timeout 240 chromium --headless --disable-gpu --no-sandbox \
    --no-first-run --disable-extensions --hide-scrollbars --force-device-scale-factor=1 \
    --window-size=$WINDOW --enable-logging=stderr --v=0 --user-data-dir="$T/chrome-$name" \
    "$@" 2>"$T/$name.chrome"
}
# look NAME HTML: the DOM (after the script ran) and a screenshot.
look () {
  chrome "$1-dom" --dump-dom "file://$2" >"$T/$1.dom"
  chrome "$1-shot" --screenshot="$T/$1.png" "file://$2" >/dev/null
}
console_clean () {
  ! grep -hE ':CONSOLE|Uncaught' "$T/$1-dom.chrome" "$T/$1-shot.chrome" >&2
}

# facts NAME REPORT_JSON: key=value lines about the DOM and the screenshot.
facts () {
  /usr/bin/python3 - "$T/$1.dom" "$T/$1.png" "$2" "$LOST_RGB" >"$T/$1.facts" <<'PY'
import html.parser, json, struct, sys, zlib

dom_path, png_path, report_path, lost = sys.argv[1:5]
lost = tuple(int(x) for x in lost.split(","))
report = json.load(open(report_path))

class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.canvas, self.verdict, self.rendered, self._in_verdict = 0, None, "", False, False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class", "").split().count("run"):
            self.rows += 1
        if tag == "canvas" and a.get("id") == "mapcanvas":
            self.canvas = a
        if tag == "span" and a.get("id") == "verdict":
            self._in_verdict = True
        if tag == "body" and a.get("data-rendered") == "yes":
            self.rendered = True
    def handle_endtag(self, tag):
        if tag == "span":
            self._in_verdict = False
    def handle_data(self, data):
        if self._in_verdict:
            self.verdict += data

def read_png(path):
    raw = open(path, "rb").read()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(raw):
        n, kind = struct.unpack(">I4s", raw[pos:pos + 8])
        body = raw[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), "PNG colour type %d depth %d" % (ctype, depth)
    bpp = 3 if ctype == 2 else 4
    data, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = data[y * (stride + 1)], bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows

d = Dom()
d.feed(open(dom_path).read())
runs = [r for f in report["files"] for r in f["runs"]]
print("rendered=%s" % ("yes" if d.rendered else "no"))
print("verdict_dom=%s" % d.verdict.split()[0] if d.verdict else "verdict_dom=")
print("verdict_json=%s" % report["verdict"])
print("rows=%d" % d.rows)
print("runs=%d" % len(runs))
w, h, bpp, rows = read_png(png_path)
c = d.canvas
px, cols, nrows = int(c["data-cell-px"]), int(c["data-cols"]), int(c["data-rows"])
x0, y0, lo, per = int(c["data-page-x"]), int(c["data-page-y"]), int(c["data-lo"]), int(c["data-cell-sectors"])
def pixel(x, y):
    r = rows[y]
    return tuple(r[x * bpp:x * bpp + 3])
count, painted = 0, 0
for y in range(y0, min(h, y0 + nrows * px)):
    for x in range(x0, min(w, x0 + cols * px)):
        p = pixel(x, y)
        count += p == lost
        painted += p != (255, 255, 255)
print("map_lost_pixels=%d" % count)
print("map_painted_pixels=%d" % painted)
lost_runs = [r for r in runs if r["class"] == "lost" and r["disk_sector"] is not None]
if lost_runs:
    cell = (lost_runs[0]["disk_sector"] - lo) // per
    x, y = x0 + (cell % cols) * px + px // 2, y0 + (cell // cols) * px + px // 2
    print("lost_cell_pixel=%s" % ("lost" if y < h and x < w and pixel(x, y) == lost else "%s at %d,%d" % (pixel(x, y) if y < h else None, x, y)))
PY
  sed 's/^/#   /' "$T/$1.facts" >&2
}
fact () { sed -n "s/^$2=//p" "$T/$1.facts"; }

# (a) The acceptance command: a real boot, writes vanish.
wtrack_run accept --workload linus2006 --size 32M --plugin-opt fault=vanish:p=0.002:seed=7
check "accept: wtrack-run exits 1 (damage found)" [ "$run_status" = 1 ]
check "accept: the run directory holds report.html" [ -s "$T/accept/report.html" ]
look accept "$T/accept/report.html"
facts accept "$T/accept/report.json"
check "accept: Chromium logs no console message (no JavaScript error)" console_clean accept
check "accept: the DOM shows the verdict damaged, as report.json says" \
  [ "$(fact accept rendered)" = yes -a "$(fact accept verdict_dom)" = damaged -a "$(fact accept verdict_json)" = damaged ]
check "accept: one run row per run of report.json ($(fact accept runs))" \
  [ "$(fact accept runs)" -gt 0 -a "$(fact accept rows)" = "$(fact accept runs)" ]
check "accept: the disk map's cell of a lost sector has the lost colour" \
  [ "$(fact accept lost_cell_pixel)" = lost ]

# (b) The trace of the same log.
"$WTRACK" dump "$T/accept/writes.wtlog" --trace "$T/accept.trace.json" 2>"$T/trace.err"
check "dump --trace exits 0" [ $? = 0 ]
"$WTRACK" dump --json "$T/accept/writes.wtlog" >"$T/accept.dump.json"
/usr/bin/python3 - "$T/accept.trace.json" "$T/accept.dump.json" >"$T/trace.facts" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
records = [json.loads(l) for l in open(sys.argv[2])]
records = [r for r in records if "type" in r]
events = trace["traceEvents"]
req = [e for e in events if e.get("cat") == "request"]
ok = sorted(e["args"]["seq"] for e in req) == [r["seq"] for r in records]
ok = ok and all(e["tid"] == r["conn"] for e, r in zip(sorted(req, key=lambda e: e["args"]["seq"]), records))
print("records=%d events=%d same=%s" % (len(records), len(req), "yes" if ok else "no"))
print("marks=%d" % sum(1 for e in events if e.get("cat") == "mark" and e["ph"] == "i"))
PY
sed 's/^/#   /' "$T/trace.facts" >&2
check "the trace parses and holds one event per record, on its connection's lane" \
  grep -q 'same=yes' "$T/trace.facts"
check "the trace holds the guest's MARKs" grep -Eq '^marks=[1-9]' "$T/trace.facts"

# (c) A clean run (synthetic: no second boot).
mkdir -p "$T/clean"
"$MKBIGRUN" "$T/clean" 64 16 2 0 2000 >/dev/null && ln -s writes-2000.wtlog "$T/clean/writes.wtlog"
"$WTRACK" check "$T/clean" --json "$T/clean/report.json" --html "$T/clean/report.html" >/dev/null
check "clean: wtrack check exits 0" [ $? = 0 ]
look clean "$T/clean/report.html"
facts clean "$T/clean/report.json"
check "clean: Chromium logs no console message" console_clean clean
check "clean: the DOM shows the verdict clean and no run rows" \
  [ "$(fact clean verdict_dom)" = clean -a "$(fact clean rows)" = 0 -a "$(fact clean runs)" = 0 ]
check "clean: the disk map is drawn and has no pixel of the lost colour" \
  [ "$(fact clean map_painted_pixels)" -gt 0 -a "$(fact clean map_lost_pixels)" = 0 ]

# (d) A million records: the report stays small and renders.
mkdir -p "$T/big"
"$MKBIGRUN" "$T/big" 1024 64 4 64 1000000 >/dev/null && ln -s writes-1000000.wtlog "$T/big/writes.wtlog"
"$WTRACK" check "$T/big" -q --html "$T/big/report.html" >/dev/null
size=$(stat -c %s "$T/big/report.html" 2>/dev/null || echo 0)
diag "a million records: report.html is $size bytes"
check "a million records: report.html is under 8 MiB" [ "$size" -gt 0 -a "$size" -lt $((8 << 20)) ]
start=$SECONDS
chrome big-shot --screenshot="$T/big.png" "file://$T/big/report.html" >/dev/null
diag "a million records: screenshot in $((SECONDS - start)) s"
big_rendered () { [ -s "$T/big.png" ] && ! grep -E ':CONSOLE|Uncaught' "$T/big-shot.chrome" >&2; }
check "a million records: the report renders (screenshot within the time limit, no console message)" \
  big_rendered
done_testing
