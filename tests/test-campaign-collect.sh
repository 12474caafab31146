#!/bin/bash
# wtrack campaign collect on a campaign folder made by hand (no boot): a
# plan of 6 cells, cell.ini files for 2 damaged, 1 clean, 1 error and none
# for 2 (not run: --until-fail stopped the campaign). The counts must be exact in summary.json, summary.txt's
# grid and damaged list, and results.xml's testsuite (failures are damaged
# cells, errors the cells that could not run), and the four files agree.
. "$(dirname "$0")/lib.sh"
require_tools /usr/bin/python3 chromium timeout
require_built "$WTRACK"
plan 13

D=$T/campaign
AGREE=$TOP/tests/tools/campaign-agree.py
mkdir -p "$D"
"$WTRACK" campaign expand --kernels='debian:bookworm' --fs='ext4 xfs' --seeds='1-3' \
  --plan "$D/plan.tsv" >/dev/null
# cell_ini ID LINES...: cells/ID/cell.ini with [cell], the cell's identity
# as plan.tsv has it (id, kernel spec, arguments tab-joined) and LINES.
cell_ini () {
  local id=$1 args
  shift
  args=$(awk -F'\t' -v id="$id" '$1 == id' "$D/plan.tsv" | cut -f7- | sed 's/\t/\\t/g')
  mkdir -p "$D/cells/$id"
  printf '%s\n' '[cell]' "id=$id" kernel=debian:bookworm "args=$args" "$@" >"$D/cells/$id/cell.ini"
}
# The cells without cell.ini were not run: --until-fail stopped the campaign.
touch "$D/until-fail" "$D/stop"
cell_ini bookworm.ext4.linus2006.s1 status=clean exit=0 seconds=10 bad_sectors=0
cell_ini bookworm.ext4.linus2006.s2 status=damaged exit=1 seconds=12 bad_sectors=24 \
  '[classes]' lost=16 lied=8
cell_ini bookworm.ext4.linus2006.s3 status=damaged exit=1 seconds=14 bad_sectors=3 \
  '[classes]' overwritten=3
cell_ini bookworm.xfs.linus2006.s1 status=error exit=2 seconds=3 'error=the guest did not boot'
# wtrack-campaign run --minimize left one damaged cell minimized
mkdir -p "$D/cells/bookworm.ext4.linus2006.s2/minimal"
echo 'verdict: 1-minimal: 2 of 40 ops still lose data' >"$D/cells/bookworm.ext4.linus2006.s2/minimal/summary.txt"

"$WTRACK" campaign collect "$D" >"$T/out.txt"; rc=$?
check "collect: exit 2 (a cell could not run)" test "$rc" = 2
check "summary.json: the minimized cell names its minimal/summary.txt, the others null" \
  test "$(/usr/bin/python3 -c 'import json,sys; print(" ".join(str(c["minimal"]) for c in json.load(open(sys.argv[1]))["cells"]))' "$D/summary.json")" \
  = "None cells/bookworm.ext4.linus2006.s2/minimal/summary.txt None None None None"
DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --disable-gpu --no-sandbox \
  --no-first-run --disable-extensions --user-data-dir="$T/chrome" \
  --dump-dom "file://$D/summary.html" >"$T/summary.dom" 2>/dev/null || true
check "summary.html: the minimized cell's entry links its minimal/summary.txt" \
  grep -qF '<a class="minimal" href="cells/bookworm.ext4.linus2006.s2/minimal/summary.txt">minimized</a>' "$T/summary.dom"
check "summary.json: 6 cells, 1 clean, 2 damaged, 1 error, 2 not run" \
  test "$(/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counts"]; print(c["cells"], c["clean"], c["damaged"], c["error"], c["not_run"])' "$D/summary.json")" = "6 1 2 1 2"
check "summary.txt's first line: 6 cells: 1 clean, 2 damaged, 1 error, 2 not run" \
  test "$(head -n 1 "$T/out.txt")" = "campaign $D: 6 cells: 1 clean, 2 damaged, 1 error, 2 not run (--until-fail)"
# The testsuite's attributes, as CI dashboards read them.
suite=$(/usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
print(s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped"), s.get("time"))' "$D/results.xml")
check "results.xml: tests 6, failures 2 (damaged), errors 1, skipped 2, time 39.0" \
  test "$suite" = "debian:bookworm 6 2 1 2 39.0"
check "results.xml: the damaged cells are failures, the error an error" \
  test "$(grep -c '<failure message="[0-9]* bad sectors" type="damaged">' "$D/results.xml") $(grep -c '<error ' "$D/results.xml")" = "2 1"
check "summary.txt: the grid says 2/3 damaged for ext4, 0/0 +1 error +2 not run for xfs" \
  grep -q '^debian:bookworm  *2/3  *0/0 +1 error +2 not run *$' "$T/out.txt"
check "summary.txt: the damaged cells with their counts and classes" \
  test "$(grep -c -e '^  bookworm.ext4.linus2006.s2: 24 bad sectors (lost=16 lied=8): ' \
    -e '^  bookworm.ext4.linus2006.s3: 3 bad sectors (overwritten=3): ' "$T/out.txt")" = 2
agree () { "$AGREE" "$D" >/dev/null; }
check "summary.txt, summary.json and results.xml agree" agree

# Without the error cell, damage alone: exit 1; all clean: exit 0.
rm -r "$D/cells/bookworm.xfs.linus2006.s1"
"$WTRACK" campaign collect -q "$D"; rc=$?
check "collect: exit 1 when cells are damaged and none failed" test "$rc" = 1
rm -r "$D/cells/bookworm.ext4.linus2006.s2" "$D/cells/bookworm.ext4.linus2006.s3"
"$WTRACK" campaign collect -q "$D"; rc=$?
check "collect: exit 0 when every cell that ran is clean" test "$rc" = 0

# A plan whose cell id would name a folder outside cells/ is refused.
cp "$D/plan.tsv" "$T/plan.good"
sed -i '2s|^[^\t]*|../../escape|' "$D/plan.tsv"
"$WTRACK" campaign collect -q "$D" >"$T/bad-id.txt" 2>&1; rc=$?
check "collect: a plan with cell id ../../escape is refused (exit $rc), naming the line" \
  test "$rc" = 2 -a -n "$(grep -F 'plan.tsv: line 2: cell id "../../escape" is not a folder name' "$T/bad-id.txt")"
cp "$T/plan.good" "$D/plan.tsv"
done_testing
