#!/bin/bash
# wtrack-run --trace (doc/design.md "Tracing"), booted on Debian's default
# kernel, one boot each, no cold pass:
#  - an ops run on ext4 with the default events: trace.txt has the header
#    (kernel, the test disk, events, lost counts, the files with the
#    manifest's inodes), block events of the test disk alone, every MARK of
#    the channel as a tracing_mark_write line in the same order, and the
#    file system's events; the report is clean; dump --channel prints the
#    TRACE pieces by their size;
#  - --trace-events naming an event the kernel lacks and a 64 KiB buffer:
#    the event is in "# missing", on the console, the run passes, and the
#    events the small buffer lost are counted;
#  - the same kind of run without --trace: no trace.txt, no TRACE message,
#    nothing of tracing on the kernel's command line.
# Without a boot: bad --trace options (and the campaign keys) are refused as
# bad usage; the trace command's bounds (a cut text counted in
# "# truncated") and a trace whose last piece is missing ("dropped").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
plan 28

RUN=$TOP/scripts/wtrack-run

# ---- bad usage, before any boot -----------------------------------------
for bad in "--trace --trace-buffer-kb 5" "--trace --trace-buffer-kb lots" \
           "--trace --trace-buffer-kb 65536 --cpus 4" "--trace --trace-events block" \
           "--trace --trace-events block:x,,y:z" "--trace-events block:block_bio_queue" \
           "--trace-buffer-kb 4096"; do
  rc=0
  # shellcheck disable=SC2086 # the options split on spaces
  "$RUN" --dry-run $bad >/dev/null 2>"$T/usage.err" || rc=$?
  check "wtrack-run $bad: bad usage (exit 4), the option named" \
    [ "$rc" = 4 -a -n "$(grep -e "--trace" "$T/usage.err")" ]
done
rc=0; "$RUN" --dry-run --trace --trace-buffer-kb 128 \
  --trace-events 'block:block_bio_queue,writeback:writeback_dirty_folio|writeback:writeback_dirty_page' || rc=$?
check "wtrack-run --dry-run takes good --trace options" [ "$rc" = 0 ]
printf '[campaign]\nkernels = debian:bookworm\nfs = ext4\nworkloads = linus2006\nseeds = 1\ntrace = true\ntrace-buffer-kb = 5\n' \
  >"$T/camp.ini"
rc=0; "$TOP/scripts/wtrack-campaign" run "$T/camp.ini" --out "$T/camp" >/dev/null 2>"$T/camp.err" || rc=$?
check "campaign key trace-buffer-kb = 5: refused before any boot (exit 4), named" \
  [ "$rc" = 4 -a -n "$(grep -e '--trace-buffer-kb' "$T/camp.err")" ]

# ---- the trace command's bounds, on a text given as the trace ------------
tfs=$T/tracefs
mkdir -p "$tfs/per_cpu/cpu0" "$tfs/per_cpu/cpu1" "$T/data"
printf 'overrun: 3\ndropped events: 2\n' >"$tfs/per_cpu/cpu0/stats"
printf 'overrun: 0\n' >"$tfs/per_cpu/cpu1/stats"
{ echo '# tracer: nop'
  for i in $(seq 1000 4999); do
    echo "   wtrack-guest-80   [000] .....   5.00$i: block_bio_queue: 254,0 W 4096 + 8 [wtrack-guest]"
  done; } >"$tfs/trace"
echo data >"$T/data/f1"
printf '# disk 254,0\n# clock mono\n# enabled block:block_bio_queue\n# missing\nnot a header line\n' >"$T/head"
"$GUEST" trace --channel-file "$T/chan.bin" --trace-head "$T/head" --trace-max-kb 100 \
  "$tfs" "$T/data" >/dev/null 2>&1 || true
"$WTRACK" dump --channel "$T/chan.bin" --trace-text "$T/cut.txt" 2>/dev/null || true
whole=$(wc -c <"$tfs/trace")
kept=$(grep -vc '^#' "$T/cut.txt" || true)
cut_bytes=$(sed -n 's/^# truncated //p' "$T/cut.txt")
check "a text past --trace-max-kb 100 is cut at a line's end, the rest counted in '# truncated' ($kept lines kept, $cut_bytes bytes cut of $whole)" \
  [ "$kept" -gt 1000 -a "$kept" -lt 4000 -a -n "$cut_bytes" \
    -a "$(( $(sed '1,/^# tracer: nop$/d' "$T/cut.txt" | wc -c) + ${cut_bytes:-0} + 14 ))" = "$whole" \
    -a "$(tail -n 1 "$T/cut.txt" | grep -c 'block_bio_queue: 254,0 W 4096 + 8 \[wtrack-guest\]$')" = 1 ]
check "the header: version, kernel, init's lines (not its other text), lost per CPU, the file and its inode" \
  [ "$(sed -n '1p;3,7p' "$T/cut.txt" | tr '\n' '|')" \
    = "# wtrack-trace 1|# disk 254,0|# clock mono|# enabled block:block_bio_queue|# missing|# lost 0=5 1=0|" \
    -a "$(grep -c '^# file .*/data/f1 '"$(stat -c %i "$T/data/f1")"'$' "$T/cut.txt")" = 1 \
    -a "$(grep -c 'not a header line' "$T/cut.txt")" = 0 ]
# the last piece lost: the channel cut after the first piece
head -c 65536 "$T/chan.bin" >"$T/chan-cut.bin"
"$WTRACK" dump --channel "$T/chan-cut.bin" --trace-text "$T/dropped.txt" 2>"$T/dropped.err" || true
check "a trace whose last piece is missing: '# lost ... dropped', and a warning" \
  [ "$(grep '^# lost' "$T/dropped.txt")" = "# lost 0=5 1=0 dropped" -a -n "$(grep 'last piece is missing' "$T/dropped.err")" ]

# ---- (a) an ops run on ext4 with the default events ----------------------
wtrack_run ops --trace --workload ops --ops 60 --files 2 --size 64K --seed 3
check "ops --trace: exits 0 (clean)" [ "$run_status" = 0 ]
tr=$T/ops/trace.txt
[ -s "$tr" ] || { not_ok "ops --trace: no trace.txt"; bail_out; }
disk=$(sed -n 's/^# disk //p' "$tr")
"$WTRACK" dump --channel "$T/ops/channel.bin" 2>/dev/null >"$T/ops.dump" || true
kernel=$(sed -n 's/^    kernel=//p' "$T/ops.dump" | head -n 1)
check "trace.txt's header: version, kernel, the test disk (MAJOR,MINOR), clock, events, nothing missing, lost counts" \
  [ "$(sed -n 1p "$tr")" = "# wtrack-trace 1" \
    -a "$(sed -n 2p "$tr")" = "# kernel $kernel" \
    -a -n "$(grep -E '^[0-9]+,[0-9]+$' <<<"$disk")" -a "$(sed -n 4p "$tr")" = "# clock mono" \
    -a -n "$(grep '^# enabled .*block:block_bio_queue .*ext4:ext4_writepages' "$tr")" \
    -a "$(grep -c '^# missing$' "$tr")" = 1 -a "$(grep -cE '^# lost( [0-9]+=[0-9]+)+$' "$tr")" = 1 ]
sed -n 's/^  file \([^ ]*\) id=[0-9]* inode=\([0-9]*\) .*/# file \1 \2/p' "$T/ops.dump" | sort -u >"$T/ops.files.want"
grep '^# file ' "$tr" | sort >"$T/ops.files.got"
check "'# file' lines: the final manifest's files and inodes ($(wc -l <"$T/ops.files.got") files)" \
  diff "$T/ops.files.want" "$T/ops.files.got"
block_devs=$(sed -n 's/.*: block_[a-z_]*: \([0-9]*,[0-9]*\) .*/\1/p' "$tr" | sort -u | tr '\n' ' ')
check "block events: some, all of the test disk $disk (the channel's filtered out): $block_devs" \
  [ "$block_devs" = "$disk " ]
sed -n 's/^msg [0-9]* guest=[^ ]* *MARK .* "\(.*\)"$/\1/p' "$T/ops.dump" >"$T/ops.marks"
sed -n 's/.* tracing_mark_write: //p' "$tr" >"$T/ops.tmarks"
[ "$(wc -l <"$T/ops.marks")" -gt 60 ] || echo "too few MARKs in the channel" >>"$T/ops.tmarks"
check "every MARK of the channel is a tracing_mark_write line, same text, same order ($(wc -l <"$T/ops.marks") of them)" \
  diff "$T/ops.marks" "$T/ops.tmarks"
check "the page cache, writeback and ext4's events are there" \
  [ -n "$(grep -m1 ': mm_filemap_add_to_page_cache: ' "$tr")" -a -n "$(grep -m1 ': writeback_dirty_folio: ' "$tr")" \
    -a -n "$(grep -m1 ': ext4_da_write_pages: ' "$tr")" -a -n "$(grep -m1 ': block_rq_complete: ' "$tr")" ]
check "dump --channel: TRACE pieces by their size, the last one named, no trace text" \
  [ -n "$(grep -E '^msg [0-9]+ guest=[^ ]* +TRACE +[0-9]+ bytes at [0-9]+ \(last piece\)$' "$T/ops.dump")" \
    -a "$(grep -c 'tracing_mark_write' "$T/ops.dump")" = 0 ]
check "ops --trace: the report is clean" grep -q '^verdict: clean' "$T/ops/report.txt"

# ---- (b) an event the kernel lacks, a small buffer -----------------------
wtrack_run small --trace --trace-buffer-kb 64 \
  --trace-events 'nosuch:event,block:block_bio_queue,block:block_rq_complete,filemap:mm_filemap_add_to_page_cache,writeback:nosuch_either|writeback:writeback_dirty_folio|writeback:writeback_dirty_page' \
  --workload linus2006 --size 8M
check "small: exits 0 (clean) though an event is missing" [ "$run_status" = 0 ]
tr=$T/small/trace.txt
check "small: '# missing nosuch:event', the console says so" \
  [ "$(grep '^# missing' "$tr")" = "# missing nosuch:event" \
    -a -n "$(grep -a 'not in this kernel: nosuch:event' "$T/small/console.log")" ]
check "small: the events asked for are enabled, the first of A|B|C the kernel has" \
  [ "$(grep '^# enabled' "$tr")" = "# enabled block:block_bio_queue block:block_rq_complete filemap:mm_filemap_add_to_page_cache writeback:writeback_dirty_folio" ]
kinds=$(sed -n 's/^ .*[0-9]\.[0-9]*: \([a-z_]*\): .*/\1/p' "$tr" | sort -u | tr '\n' ' ')
check "small: only those events (and the MARKs) are in it: $kinds" \
  [ -z "$(tr ' ' '\n' <<<"$kinds" | grep -vx 'block_bio_queue\|block_rq_complete\|mm_filemap_add_to_page_cache\|writeback_dirty_folio\|tracing_mark_write\|')" ]
lost=$(sed -n 's/^# lost //p' "$tr")
check "small: a 64 KiB buffer loses events, counted ($lost)" [ "${lost#0=}" -gt 0 ] 2>/dev/null

# ---- (c) without --trace: nothing of it ------------------------------------
wtrack_run plain --workload ops --ops 60 --files 2 --size 64K --seed 3
check "plain: exits 0, no trace.txt" [ "$run_status" = 0 -a ! -e "$T/plain/trace.txt" ]
check_fails "plain: no TRACE message in the channel" grep -q ' TRACE ' <("$WTRACK" dump --channel "$T/plain/channel.bin" 2>/dev/null)
check_fails "plain: no wtrack.trace on the kernel's command line" grep -q 'wtrack.trace' "$T/plain/qemu.cmdline"
