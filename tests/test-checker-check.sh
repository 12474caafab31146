#!/bin/bash
# wtrack check (and verify) on run directories with known damage, made by
# tests/unit/test-check-classes: every class, the precedence cases, a
# partial last sector, an unwritten extent, holes, content shared by
# neighbouring sectors; clean, torn, no manifest; a partial ZERO, a file in
# two extents apart on the disk, a file whose size alone changed cold; a
# DELALLOC extent after the sync (its data lost, its zeros clean).
. "$(dirname "$0")/lib.sh"
require_tools /usr/bin/python3 truncate
GEN=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$GEN"
plan 32

for s in clean damaged nomanifest zeroed coldgrew delalloc delalloczero; do "$GEN" --make "$T/$s" $s; done

# The bad sectors of a JSON report, one "PATH FILE_SECTOR DISK_SECTOR CLASS"
# line each, sorted, in the generator's truth.txt format.
bad_sectors () {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for f in d["files"]:
    n = 0
    for r in f["runs"]:
        for i in range(r["sectors"]):
            ds = "-" if r["disk_sector"] is None else str(r["disk_sector"] + i)
            out.append("%s %d %s %s" % (f["path"], r["file_offset"] // 512 + i, ds, r["class"]))
            n += 1
    assert n == f["bad_sectors"], (f["path"], n, f["bad_sectors"])
print("\n".join(sorted(out)))
PY
}
json_get () { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$WTRACK" check "$T/clean" --json "$T/clean.json" >"$T/clean.txt"; rc=$?
check "clean: exit 0" [ "$rc" = 0 ]
check "clean: JSON verdict clean, 0 bad sectors" \
  test "$(json_get "$T/clean.json" 'd["verdict"], d["bad_sectors"]')" = "clean 0"
check "clean: both files clean, every sector checked (64 and 2)" \
  test -n "$(grep '^/data/f1: clean (64 sectors checked)' "$T/clean.txt")" -a -n "$(grep '^/data/f2: clean (2 sectors checked)' "$T/clean.txt")"

"$WTRACK" check "$T/damaged" --json "$T/damaged.json" >"$T/damaged.txt"; rc=$?
check "damaged: exit 1" [ "$rc" = 1 ]
bad_sectors "$T/damaged.json" >"$T/got.txt"
sort "$T/damaged/truth.txt" >"$T/want.txt"
if diff "$T/want.txt" "$T/got.txt" >"$T/diff.txt"; then ok "damaged: exactly the generated bad sectors, each with its class"
else not_ok "damaged: bad sectors differ from the truth"; sed 's/^/# /' "$T/diff.txt" >&2; fi
check "damaged: by_class totals" \
  test "$(json_get "$T/damaged.json" 'd["by_class"]["lost"], d["by_class"]["overwritten"], d["by_class"]["lied"], d["by_class"]["misplaced"], d["by_class"]["unmapped"], d["bad_sectors"]')" = "15 8 4 5 4 36"
check "damaged: misplaced run names disk sector 5000" \
  test "$(json_get "$T/damaged.json" '[r["misplaced_to"]["disk_sector"] for r in d["files"][0]["runs"] if r["class"]=="misplaced"]')" = "[5000]"
check "damaged: content that reached a neighbour expecting the same bytes is lost, not misplaced there" \
  test "$(json_get "$T/damaged.json" '[(r["file_sector"], r["class"], r.get("misplaced_to", {}).get("disk_sector")) for r in d["files"][2]["runs"]]')" = "[(3, 'lost', None), (4, 'misplaced', 7105), (5, 'lost', None)]"
check "damaged: the overwritten run that was also misplaced says overwritten by seq 12" \
  test "$(json_get "$T/damaged.json" '[r["replaced_by_seq"] for r in d["files"][0]["runs"] if r["class"]=="overwritten"]')" = "[7, 12]"
check "damaged: lost sectors 12-15 hold the old write (seq 5), 8-11 pre-run" \
  test "$(json_get "$T/damaged.json" '[s.get("holds_seq") for s in d["files"][0]["runs"][0]["sector_detail"]]')" = "[None, None, None, None, 5, 5, 5, 5]"
check "damaged: the op's time is mapped onto the log clock through the MARKs" \
  test "$(json_get "$T/damaged.json" '[(r["op_time_ns"], r["op_time_approx"]) for r in d["files"][0]["runs"] if r["class"]=="lied"]')" = "[(1007000000, False)]"
check "damaged: verdict line for the partial-sector file" \
  grep -q '^/data/f2: 1 sector lost in 1 page; page cache was correct' "$T/damaged.txt"
check "damaged: page view" grep -q '^  page 2 of /data/f1: sectors 4-7 of 8 lied; sectors 0-3 of 8 overwritten$' "$T/damaged.txt"

# A sector expecting zeros that only a partial ZERO touched: the log never
# said the whole sector held zeros, so the disk did not lie about it. And a
# file whose two sectors are apart on the disk: two runs.
"$WTRACK" check "$T/zeroed" --json "$T/zeroed.json" >"$T/zeroed.txt"; rc=$?
bad_sectors "$T/zeroed.json" >"$T/zgot.txt"
check "zeroed: exit 1, three bad sectors" test "$rc" = 1 -a "$(json_get "$T/zeroed.json" 'd["bad_sectors"]')" = 3
check "zeroed: a sector hit by a partial ZERO is lost, not lied; runs split where the disk jumps" \
  test "$(cat "$T/zgot.txt")" = "$(sort "$T/zeroed/truth.txt")"
check "zeroed: file sectors contiguous but not on the disk make two runs" \
  test "$(json_get "$T/zeroed.json" '[(r["disk_sector"], r["sectors"]) for r in d["files"][3]["runs"]]')" = "[(7300, 1), (7310, 1)]"
check "zeroed: readback=mismatch says the page cache was wrong too" \
  grep -q '^/data/f3: 1 sector lost in 1 page; page cache was wrong too' "$T/zeroed.txt"

# FIEMAP still says DELALLOC after the guest's sync: the kernel holds bytes
# it never wrote. Sectors whose data it holds are lost (no disk sector);
# those that must read zeros are clean; none is "not checkable".
"$WTRACK" check "$T/delalloc" --json "$T/delalloc.json" >"$T/delalloc.txt"; rc=$?
bad_sectors "$T/delalloc.json" >"$T/dgot.txt"
check "delalloc: exit 1, damaged, the 4 data sectors lost with no disk sector" \
  test "$rc $(json_get "$T/delalloc.json" 'd["verdict"], d["by_class"]["lost"]')" = "1 damaged 4" \
    -a "$(cat "$T/dgot.txt")" = "$(sort "$T/delalloc/truth.txt")"
check "delalloc: every f4 sector compared, none counted not checkable" \
  test "$(json_get "$T/delalloc.json" 'd["files"][3]["checked_sectors"], d["files"][3]["uncheckable_sectors"]')" = "16 0"
check "delalloc: the run names the file offset and says why, with no disk sector" \
  grep -q '^  lost        file bytes 4096+2048 (sectors 8-11); last op 12 pwrite 0+6144 .*; no disk sector: delayed allocation never written (extent DELALLOC after the sync): the kernel holds these bytes, no block was allocated$' "$T/delalloc.txt"
"$WTRACK" check "$T/delalloc" --html "$T/delalloc.html" >/dev/null
check "delalloc: the HTML report's run has no disk sector and says DELALLOC" \
  grep -q '{"f":3,"c":[0-9]*,"fs":8,"ds":null,"n":4,[^{}]*"delalloc":true' "$T/delalloc.html"
"$WTRACK" check "$T/delalloczero" --json "$T/delalloczero.json" >"$T/delalloczero.txt"; rc=$?
check "delalloczero: a DELALLOC extent that must read zeros is clean, compared" \
  test "$rc $(json_get "$T/delalloczero.json" 'd["verdict"], d["files"][3]["checked_sectors"], d["files"][3]["uncheckable_sectors"]')" = "0 clean 16 0"
check "dump names the DELALLOC extent" \
  eval '"$WTRACK" dump --channel "$T/delalloc/channel.bin" | grep -q "extent logical=4096 physical=0 length=4096 flags=UNMAPPABLE,DELALLOC$"'

# After the reboot a file grew a zero tail, every sector as expected: the
# size alone makes the file, and the disk, damaged.
"$WTRACK" check "$T/coldgrew" --json "$T/coldgrew.json" >"$T/coldgrew.txt"; rc=$?
check "coldgrew: exit 1, warm clean, cold damaged" \
  test "$rc $(json_get "$T/coldgrew.json" 'd["bad_sectors"], d["cold"]["verdict"], d["verdict"]')" = "1 0 damaged damaged"
check "coldgrew: 1 file damaged, 1 size changed, 0 bad sectors" \
  test "$(json_get "$T/coldgrew.json" 'd["cold"]["files_damaged"], d["cold"]["size_changed"], d["cold"]["bad_sectors"]')" = "1 1 0"

"$WTRACK" check --quiet --max-runs 1 "$T/damaged" >"$T/quiet.txt"
check "--quiet: verdict lines only (3 files, 1 total)" test "$(wc -l <"$T/quiet.txt")" = 4

"$WTRACK" check "$T/nomanifest" >"$T/nomf.txt" 2>&1; rc=$?
check "no manifest: exit 2 saying so" test "$rc" = 2 -a -n "$(grep 'no final manifest' "$T/nomf.txt")"

"$WTRACK" check --no-manifest "$T/damaged" --json "$T/nomf.json" >"$T/nomf2.txt"; rc=$?
check "--no-manifest: exit 1, the 4 lied sectors at disk 2068" \
  test "$rc" = 1 -a "$(json_get "$T/nomf.json" 'd["bad_sectors"], d["disk_runs"][0]["disk_sector"]')" = "4 2068"

"$WTRACK" verify "$T/damaged/writes.wtlog" "$T/damaged/disk.img" >"$T/verify.txt"; rc=$?
check "verify: exit 1 with 4 differing sectors" \
  test "$rc" = 1 -a "$(grep -c '^  sector ' "$T/verify.txt")" = 4
check "verify: clean run exits 0" eval '"$WTRACK" verify "$T/clean/writes.wtlog" "$T/clean/disk.img" >/dev/null'

# A torn log with otherwise clean files: 2, and said prominently.
truncate -s -10 "$T/clean/writes.wtlog"
"$WTRACK" check "$T/clean" --json "$T/torn.json" >"$T/torn.txt"; rc=$?
check "torn log: exit 2 with LOG TORN" test "$rc" = 2 -a -n "$(grep '^!! LOG TORN' "$T/torn.txt")"
check "torn log: the files are still checked clean" \
  test "$(json_get "$T/torn.json" 'd["verdict"], d["log"]["end"], d["inputs_complete"]')" = "clean torn False"
done_testing
