#!/bin/bash
# wtrack check's join of the guest kernel's trace (RUN_DIR/trace.txt,
# wtrack-run --trace) with the bad pages: the damaged run of
# tests/unit/test-check-classes with a synthetic trace whose events give
# each finding rule one page (doc/design.md "The kernel's account"), then
# the cases where the trace cannot say (lost events, an event the kernel
# lacks, clocks not tied), a header that is not the contract's, and the
# run without a trace, whose reports are those of a check without --trace.
. "$(dirname "$0")/lib.sh"
GEN=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$GEN"
plan 30

"$GEN" --make "$T/run" damaged
R=$T/run
# The run's MARKs: "start" at log t=1.002, "synced" at t=1.018; the trace's
# clock is the log's plus 98.998 s. Inodes: f1 12, f2 13, f3 14; disk
# sectors: f1's pages 0-3 at 2048-2079, f3 at 7100-7107.
header () {
  cat <<EOF
# wtrack-trace 1
# kernel 6.1.0-test
# disk 254,0
# enabled writeback:writeback_dirty_folio writeback:writeback_single_inode ext4:ext4_writepages filemap:mm_filemap_add_to_page_cache filemap:mm_filemap_delete_from_page_cache block:block_bio_queue block:block_rq_complete
# clock local
# missing writeback:writeback_dirty_page
EOF
}
events () {
  cat <<'EOF'
# tracer: nop
#
# entries-in-buffer/entries-written: 14/14   #P:2
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
    wtrack-guest-80      [000] .....   100.000000: tracing_mark_write: start
    wtrack-guest-80      [000] .....   100.000100: writeback_dirty_folio: bdi 254:0: ino=12 index=5
 kworker/u4:1-30      [001] .....   100.000200: block_bio_queue: 254,0 W 4100 + 4 [kworker/u4:1]
 kworker/u4:1-30      [001] .....   100.013500: block_bio_queue: 254,0 W 7105 + 1 [kworker/u4:1]
    wtrack-guest-80      [000] .....   100.015800: writeback_dirty_folio: bdi 254:0: ino=12 index=2
    wtrack-guest-80      [000] .....   100.015800: writeback_dirty_folio: bdi 254:0: ino=12 index=3
    wtrack-guest-80      [000] .....   100.015800: writeback_dirty_folio: bdi 254:0: ino=12 index=4
    wtrack-guest-80      [000] .....   100.015800: writeback_dirty_folio: bdi 254:0: ino=13 index=0
    wtrack-guest-80      [000] .....   100.015850: mm_filemap_delete_from_page_cache: dev 254:0 ino d pfn=0x1234 ofs=0 order=0
    wtrack-guest-80      [000] .....   100.015820: ext4_zero_range: dev 254,0 ino 12 offset 10240 len 2048 mode ZERO_RANGE
 kworker/u4:1-30      [001] .....   100.015850: ext4_writepages: dev 254,0 ino 12 nr_to_write 1024 pages_skipped 0 range_start 8192 range_end 12287 sync_mode 1 for_kupdate 0 range_cyclic 0 writeback_index 0
 kworker/u4:1-30      [001] .....   100.015850: ext4_writepages: dev 254,0 ino 12 nr_to_write 1024 pages_skipped 0 range_start 16384 range_end 20479 sync_mode 1 for_kupdate 0 range_cyclic 0 writeback_index 0
 kworker/u4:1-30      [001] .....   100.015860: block_bio_queue: 254,0 W 2048 + 8 [kworker/u4:1]
 kworker/u4:1-30      [001] .....   100.015900: block_bio_queue: 254,0 W 2056 + 8 [kworker/u4:1]
 kworker/u4:1-30      [001] d.h1.   100.015950: block_rq_complete: 254,0 W () 2056 + 8 [0]
    wtrack-guest-80      [000] .....   100.016000: tracing_mark_write: synced
this line is not an event
EOF
}

# The run without a trace first: what every report must stay.
"$WTRACK" check "$R" --json "$T/plain.json" --html "$T/plain.html" >"$T/plain.txt" 2>&1
{ header; events; } >"$R/trace.txt"
"$WTRACK" check "$R" --json "$T/all.json" --html "$T/all.html" >"$T/all.txt" 2>&1; rc=$?
check "with trace.txt: exit 1 (the damage is the same)" [ "$rc" = 1 ]
page () { grep -F "  page $1: " "$T/all.txt"; }
check "RUN_DIR/trace.txt read by default: its events and MARKs counted" \
  grep -q "^kernel trace $R/trace.txt (kernel 6.1.0-test): 16 events, 2 of 2 MARKs found in the channel$" "$T/all.txt"
check "the line that is not an event: counted and named" \
  grep -q '^!! 1 lines of the trace are not events, skipped (the first: line 29)$' "$T/all.txt"
check "the event the kernel lacks: named" grep -q '^!! events this kernel lacks: writeback:writeback_dirty_page$' "$T/all.txt"
check "device lost: a bio for the sector, no write of it in the log" \
  eval 'page "1 of /data/f1" | grep -q "bio for disk sector 2056 issued at t=1.017900 (block_bio_queue, line 26), completed by the device at t=1.017950 without error, but no write of it ever reached the disk: the device lost it$"'
check "bio missed: written back, the bio covered other sectors" \
  eval 'page "2 of /data/f1" | grep -q "marked dirty at t=1.017800 after op 5 (pwrite), then ext4_zero_range on or next to it at t=1.017820, a writeback of the file covered it at t=1.017850 (ext4_writepages), but the bio covered disk sectors 2056-2063 (line 26), not 2064$"'
check "dirty dropped: dirty after the op, a range op ending in the page before, never written back" \
  eval 'page "3 of /data/f1" | grep -q "marked dirty at t=1.017800 after op 7 (pwrite), then ext4_zero_range on or next to it at t=1.017820, never written back (no writepages or bio covered it): the kernel dropped the dirty page$"'
check "bio missed on a page without a disk block" \
  eval 'page "4 of /data/f1" | grep -q "a writeback of the file covered it at t=1.017850 (ext4_writepages), but the page has no disk block: no bio could cover it$"'
check "store not seen: never marked dirty after the op (dirty before it, written out by a bio)" \
  eval 'page "5 of /data/f1" | grep -q "written by op 9 (fallocate), never marked dirty after it: the kernel did not see the store$"'
check "deleted while dirty: removed from the page cache (inode in hex) before writeback" \
  eval 'page "0 of /data/f2" | grep -q "deleted from the page cache at t=1.017850 before any writeback: the kernel dropped the dirty page$"'
check "bio reached: the log holds a write after the bio" \
  eval 'page "0 of /data/f3" | grep -q "bio for disk sector 7105 issued at t=1.015500 reached the disk as write seq 17 (t=1.016000); the disk does not hold the expected content (lost)$"'
check "each page's events listed, the finding's marked" \
  grep -q '^    > t=1.017800 writeback_dirty_folio: bdi 254:0: ino=12 index=3$' "$T/all.txt"
check "an inode event of another page is not in the story" \
  eval '! sed -n "/page 3 of \/data\/f1/,/page 4/p" "$T/all.txt" | grep -q "range_start 8192"'
rules=$(python3 -c 'import json,sys; print(" ".join(p["rule"] for p in json.load(open(sys.argv[1]))["trace_pages"]))' "$T/all.json")
check "JSON: every page's rule ($rules)" \
  [ "$rules" = "device_lost bio_missed dirty_dropped bio_missed store_not_seen deleted_while_dirty bio_reached" ]
check "JSON: the trace's header" python3 -c '
import json,sys
t = json.load(open(sys.argv[1]))["trace"]
assert t["disk"] == "254,0" and t["events"] == 16 and t["malformed_lines"] == 1, t
assert t["missing"] == ["writeback:writeback_dirty_page"] and t["clocks_tied"], t
p = json.load(open(sys.argv[1]))["trace_pages"][0]
assert [e["evidence"] for e in p["events"]] == [True, False] and p["events"][0]["log_ns"] == 1017900000, p' "$T/all.json"

# Without the trace's section, the text is the check's without a trace.
check "the rest of report.txt is the report without a trace" diff -u "$T/plain.txt" <(sed '/^kernel trace /,/^cold:/{/^cold:/!d}' "$T/all.txt")
rm "$R/trace.txt"
"$WTRACK" check "$R" --json "$T/none.json" --html "$T/none.html" >"$T/none.txt" 2>&1
check "no trace.txt: report.txt unchanged" cmp "$T/plain.txt" "$T/none.txt"
check "no trace.txt: report.json has no trace member" eval '! grep -q "\"trace" "$T/none.json"'

# A bio after the sector's last logged write (seq 5, long before): lost by the device.
{ header; events | sed 's/W 2056 + 8/W 2060 + 4/'; } >"$T/oldwrite.txt"
"$WTRACK" check "$R" --trace "$T/oldwrite.txt" >"$T/oldwrite.out" 2>&1
check "device lost: the log's last write of the sector came before the bio" \
  grep -q '  page 1 of /data/f1: bio for disk sector 2060 issued at t=1.017900 (block_bio_queue, line 26), completed by the device at t=1.017950 without error, but no write of it reached the disk after that (the log.s last, seq 5, was at t=1.004000): the device lost it$' "$T/oldwrite.out"

# Lost events: rules that rest on an absence cannot say; a bio seen still says.
{ header; echo "# lost 0=0 1=5"; events; } >"$T/lost.txt"
"$WTRACK" check "$R" --trace "$T/lost.txt" >"$T/lost.out" 2>&1
check "lost events: said" grep -q '^!! the trace lost 5 events' "$T/lost.out"
check "lost events: a dirty page never written back cannot say" \
  grep -q '  page 3 of /data/f1: the trace cannot say: the trace lost 5 events, so an event it lacks may have happened$' "$T/lost.out"
check "lost events: the bio seen still says the device lost it" \
  grep -q '  page 1 of /data/f1: bio for disk sector 2056 .*the device lost it$' "$T/lost.out"

# The kernel has no dirtying event: never-dirty cannot be said.
{ header | sed 's/ writeback:writeback_dirty_folio//; s/^# missing .*/# missing writeback:writeback_dirty_folio writeback:writeback_dirty_page/'; events | grep -v writeback_dirty; } >"$T/nodirty.txt"
"$WTRACK" check "$R" --trace "$T/nodirty.txt" >"$T/nodirty.out" 2>&1
check "no dirtying event: store not seen cannot say" \
  grep -q '  page 5 of /data/f1: the trace cannot say: this trace has no writeback:writeback_dirty_folio or _page event$' "$T/nodirty.out"

# No MARK ties the clocks: trace times, and a bio after a logged write cannot say.
{ header; events | grep -v tracing_mark_write; } >"$T/nomarks.txt"
"$WTRACK" check "$R" --trace "$T/nomarks.txt" >"$T/nomarks.out" 2>&1
check "clocks not tied: said" grep -q '0 of 0 MARKs found in the channel: the trace.s clock is not tied to the log.s$' "$T/nomarks.out"
check "clocks not tied: the bio against a logged write cannot say" \
  grep -q '  page 0 of /data/f3: the trace cannot say: a bio for disk sector 7105 was issued at trace time 100.013500, but no MARK ties' "$T/nomarks.out"
check "clocks not tied: the op's time unknown, the whole trace read" \
  grep -q 'page 3 of /data/f1: marked dirty at trace time 100.015800 (last written by op 7 (pwrite)), then ext4_zero_range on or next to it at trace time 100.015820, never written back .*(the op.s time is unknown' "$T/nomarks.out"

# A kernel without tracefs (wtrack-run writes "# clock none"): nothing traced.
printf '# wtrack-trace 1\n# kernel k\n# disk 254,0\n# clock none\n# enabled\n# missing block:block_bio_queue\n# lost\n' >"$T/none.txt"
"$WTRACK" check "$R" --trace "$T/none.txt" >"$T/none.out" 2>&1
check "no tracefs: every page cannot say, and why" \
  grep -q '  page 3 of /data/f1: the trace cannot say: the guest kernel has no tracefs: nothing was traced$' "$T/none.out"

# A header line that is not the contract's: exit 2, the file and line named.
{ header; echo "# disk 254"; events; } >"$T/badhdr.txt"
"$WTRACK" check "$R" --trace "$T/badhdr.txt" >"$T/badhdr.out" 2>&1; rc=$?
check "a bad header line: exit 2" [ "$rc" = 2 ]
check "a bad header line: the file and line named" \
  grep -q "badhdr.txt: line 7: \"# disk 254\" is not a header line" "$T/badhdr.out"
printf 'hello\n' >"$T/notrace.txt"
"$WTRACK" check "$R" --trace "$T/notrace.txt" >"$T/notrace.out" 2>&1; rc=$?
check "not a trace.txt: exit 2, said" eval '[ "$rc" = 2 ] && grep -q "notrace.txt: line 1: not \"# wtrack-trace 1\"" "$T/notrace.out"'
done_testing
