#!/bin/bash
# wtrack check against known damage on real boots (Debian's kernel, ext4):
# the plugin injects faults (vanish, lie, tear) and writes the ground truth;
# tests/tools/faultset predicts from it, the log and base.img alone which
# file sectors must be bad; the report must name exactly those, each with
# the class the fault implies. Also the acceptance command and its clean twin.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools /usr/bin/python3
FAULTSET=$TOP/tests/tools/faultset
require_built "$FAULTSET"
plan 26

# Compares run NAME's report.json with faultset's prediction; writes
# key=value facts to $T/NAME.cmp: predicted, reported, precision, recall,
# classes (the distinct classes reported), and for the page view
# pages_match (every bad page's bad_mask and text name exactly the
# predicted sectors of that page) and partial_pages (pages with some but
# not all of their sectors bad).
compare_faults () {
  local name=$1
  "$FAULTSET" "$T/$name" "$T/$name/faults.txt" >"$T/$name.predicted" 2>"$T/$name.faultset.err" \
    || sed 's/^/#   faultset: /' "$T/$name.faultset.err" >&2
  /usr/bin/python3 - "$T/$name/report.json" "$T/$name.predicted" >"$T/$name.cmp" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
predicted = set(tuple(l.split()) for l in open(sys.argv[2]) if l.strip())
reported, classes, pages_ok, partial = set(), set(), True, 0
by_page = {}
for p, fs, ds in predicted:
    by_page.setdefault((p, int(fs) // 8), set()).add(int(fs) % 8)
for f in report["files"]:
    for r in f["runs"]:
        classes.add(r["class"])
        for i in range(r["sectors"]):
            ds = "-" if r["disk_sector"] is None else str(r["disk_sector"] + i)
            reported.add((f["path"], str(r["file_offset"] // 512 + i), ds))
    for pg in f["pages"]:
        want = by_page.get((f["path"], pg["page"]), set())
        got = {i for i in range(8) if pg["bad_mask"] >> i & 1}
        named = set()
        for m in re.finditer(r"sectors? ([0-9,-]+) of \d+ ", pg["text"]):
            for part in m.group(1).split(","):
                a, _, b = part.partition("-")
                named.update(range(int(a), int(b or a) + 1))
        if got != want or named != want:
            pages_ok = False
            print("# page %d of %s: predicted %s, bad_mask %s, text %r"
                  % (pg["page"], f["path"], sorted(want), sorted(got), pg["text"]), file=sys.stderr)
        if 0 < len(got) < 8:
            partial += 1
both = len(reported & predicted)
for s in sorted(predicted - reported)[:10]:
    print("# predicted, not reported: %s" % " ".join(s), file=sys.stderr)
for s in sorted(reported - predicted)[:10]:
    print("# reported, not predicted: %s" % " ".join(s), file=sys.stderr)
print("predicted=%d" % len(predicted))
print("reported=%d" % len(reported))
print("precision=%g" % (both / len(reported) if reported else 0))
print("recall=%g" % (both / len(predicted) if predicted else 0))
print("classes=%s" % ",".join(sorted(classes)))
print("pages_match=%s" % ("yes" if pages_ok else "no"))
print("partial_pages=%d" % partial)
PY
  diag "$name: $(grep -E '^(predicted|reported|precision|recall|partial_pages)=' "$T/$name.cmp" | tr '\n' ' ')"
}
fact () { sed -n "s/^$2=//p" "$T/$1.cmp"; }

# The five checks every fault run gets.
check_fault_run () {
  local name=$1 class=$2
  check "$name: wtrack-run exits 1 (damage found)" [ "$run_status" = 1 ]
  compare_faults "$name"
  check "$name: the ground truth predicts damaged file sectors (the test is not vacuous)" \
    [ "$(fact "$name" predicted)" -gt 0 ]
  echo "# precision=$(fact "$name" precision) recall=$(fact "$name" recall)"
  check "$name: the report's bad sectors are exactly the predicted ones (precision=1 recall=1)" \
    [ "$(fact "$name" precision)" = 1 -a "$(fact "$name" recall)" = 1 ]
  check "$name: every bad sector is classed $class" [ "$(fact "$name" classes)" = "$class" ]
  check "$name: report.txt's verdict line says so" \
    grep -Eq "^/data/[^:]+: [0-9]+ sectors? $class in [0-9]+ pages?" "$T/$name/report.txt"
}

# (a) writes acknowledged but neither stored nor logged: the 2006 bug's shape.
wtrack_run vanish --workload linus2006 --size 16M \
  --plugin-opt fault=vanish:p=0.005:seed=7
check_fault_run vanish lost

# (b) a disk that lies: logged, acknowledged, not stored.
wtrack_run lie --workload torrent --files 2 --size 4M --piece 64K \
  --plugin-opt fault=lie:p=0.01:seed=3
check_fault_run lie lied

# (c) torn writes: some sectors of a 4 KiB write stored, all logged.
wtrack_run tear --workload linus2006 --size 16M \
  --plugin-opt fault=tear:p=0.01:seed=5
check_fault_run tear lied
check "tear: the page view shows each page's torn sectors and no others" \
  [ "$(fact tear pages_match)" = yes ]
check "tear: some pages are torn, not wholly bad" [ "$(fact tear partial_pages)" -gt 0 ]

# (d) the acceptance command, and the same run without the fault.
wtrack_run accept --workload linus2006 --size 32M --plugin-opt fault=vanish:p=0.002:seed=7
check_fault_run accept lost
check "accept: report.txt lists lost runs" grep -q '^  lost  ' "$T/accept/report.txt"
check "accept: the page cache held the data, the disk did not" \
  grep -q 'page cache was correct; the disk was not' "$T/accept/report.txt"
wtrack_run accept-clean --workload linus2006 --size 32M
check "accept without the fault: exits 0" [ "$run_status" = 0 ]
check "accept without the fault: report.json says clean" \
  grep -q '"verdict": *"clean"' "$T/accept-clean/report.json"
done_testing
