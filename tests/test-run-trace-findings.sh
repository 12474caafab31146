#!/bin/bash
# The kernel's account of a real loss (wtrack check --trace on a booted
# run): the ops workload on Debian's kernel with --trace and the plugin's
# vanish fault (writes acknowledged, never stored or logged). Every bad
# page's finding must be the device's loss, resting on a block_bio_queue
# that covered the sector, and a page's story must name the ops that wrote
# it by their MARK text (doc/design.md, "The kernel's account"). A page
# whose last op moved its data (insert) is judged by the bios of its disk
# sectors over the whole trace, which do not move with it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools python3
plan 5

wtrack_run vanish --trace --workload ops --ops 80 --files 2 --size 256K --seed 1 \
  --plugin-opt fault=vanish:p=0.2:seed=3
R=$T/vanish
check "the run exits 1 (the vanished writes are damage)" [ "$run_status" = 1 ]
check "it wrote trace.txt and the report has the kernel's account" \
  grep -q '^kernel trace .*: [0-9]* events, \([0-9]*\) of \1 MARKs found in the channel$' "$R/report.txt"
python3 - "$R/report.json" >"$T/facts.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pages = r.get("trace_pages", [])
print("pages=%d" % len(pages))
print("bad_pages=%d" % sum(len(f["pages"]) for f in r["files"]))
print("rules=%s" % ",".join(sorted(set(p["rule"] for p in pages))))
ev = [e for p in pages for e in p["events"] if e["evidence"]]
print("evidence=%s" % ",".join(sorted(set(e["event"] for e in ev))))
named = [p for p in pages if any(e["kind"] == "mark" and e["fields"].startswith("op %d " % p["op"])
                                  for e in p["events"])]
moved = [p for p in pages if p["rule"] == "cannot_say" and "moved or shared" in p["finding"]]
print("moved=%d" % len(moved))
print("named=%d" % len(named))
PY
sed 's/^/#   /' "$T/facts.txt" >&2
fact () { sed -n "s/^$1=//p" "$T/facts.txt"; }
check "every bad page has a story ($(fact pages) of $(fact bad_pages))" \
  [ "$(fact pages)" -ge 1 -a "$(fact pages)" = "$(fact bad_pages)" ]
check "every finding: the device lost it, resting on a block_bio_queue" \
  [ "$(fact rules)" = device_lost -a "$(fact evidence)" = block_bio_queue ]
check "the stories name the page's last op by its MARK text ($(fact named) of $(fact pages))" \
  [ "$(fact named)" -ge 1 ]
done_testing
