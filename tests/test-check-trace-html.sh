#!/bin/bash
# report.html with a kernel trace (checker/lib/html/report-trace.js), looked
# at in headless Chromium: the damaged run of tests/unit/test-check-classes
# and the synthetic trace of tests/test-check-trace.sh (one page a finding
# rule). No console message may appear; the page shows one story a page of
# report.json's trace_pages, with its finding and its events, and a strip
# per story. Without a trace the page carries no trace script at all.
. "$(dirname "$0")/lib.sh"
require_tools chromium /usr/bin/python3 timeout
GEN=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$GEN"
plan 6

"$GEN" --make "$T/run" damaged
R=$T/run
"$WTRACK" check "$R" --html "$T/plain.html" >/dev/null 2>&1
# The trace of tests/test-check-trace.sh, from its here-documents.
sed -n "/^header () {/,/^}/p; /^events () {/,/^}/p" "$TOP/tests/test-check-trace.sh" >"$T/trace-fns.sh"
# shellcheck source=/dev/null
. "$T/trace-fns.sh"
{ header; events; } >"$R/trace.txt"
"$WTRACK" check "$R" --html "$T/trace.html" --json "$T/trace.json" >/dev/null 2>&1

DBUS_SESSION_BUS_ADDRESS=disabled: timeout 240 chromium --headless --disable-gpu --no-sandbox \
  --no-first-run --disable-extensions --hide-scrollbars --window-size=1280,3000 \
  --enable-logging=stderr --v=0 --user-data-dir="$T/chrome" --dump-dom "file://$T/trace.html" \
  >"$T/trace.dom" 2>"$T/trace.chrome"
check "Chromium logs no console message (no JavaScript error)" \
  eval '! grep -hE ":CONSOLE|Uncaught" "$T/trace.chrome" >&2'
check "the trace section rendered its 7 stories" grep -q 'data-trace-rendered="7"' "$T/trace.dom"
check "the page's stories: each page's rule, in report.json's order" /usr/bin/python3 - "$T/trace.dom" "$T/trace.json" <<'PY'
import html.parser, json, sys
class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rules, self.canvases, self.findings, self._finding = [], 0, [], False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("class") == "story":
            self.rules.append(a.get("data-rule"))
        if tag == "canvas" and a.get("class") == "storystrip":
            self.canvases += 1
        self._finding = tag == "p" and a.get("class") == "finding"
    def handle_data(self, data):
        if self._finding:
            self.findings.append(data)
            self._finding = False
d = Dom()
d.feed(open(sys.argv[1]).read())
pages = json.load(open(sys.argv[2]))["trace_pages"]
assert d.rules == [p["rule"] for p in pages], (d.rules, [p["rule"] for p in pages])
assert d.findings == [p["finding"] for p in pages], d.findings
assert d.canvases == len(pages), d.canvases
PY
check "the evidence event listed in bold" \
  grep -q 'font-weight: bold;">t=1.017800 writeback_dirty_folio: bdi 254:0: ino=12 index=3' "$T/trace.dom"
check "without a trace: no trace script in the page" eval '! grep -q "report-trace\|data-trace-rendered" "$T/plain.html"'
check "with a trace: the trace script and data embedded" \
  eval 'grep -q "data-trace-rendered" "$T/trace.html" && grep -q "\"trace\":{" "$T/trace.html"'
done_testing
