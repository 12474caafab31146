#!/bin/bash
# A real run with --also-blklogwrites: QEMU's blklogwrites driver sits on
# the NBD disk and writes its own dm-log-writes log (blklog.bin) of the same
# requests the plugin logs. Imported, it replays on base.img to disk.img,
# and both logs describe the same writes.
#
# What is compared: the disk-changing records (WRITE, ZERO, TRIM) with
# their offset, length and per-sector hashes; CHANNEL, OPEN and CLOSE are
# the plugin's alone. Both logs must hold the same writes. Their order is
# only defined where it decides the disk's content: the guest keeps several
# requests in flight in QEMU, and blklogwrites numbers them in another order
# than QEMU's NBD client sends them, so writes that touch a common sector
# must keep their order, others may move, by no more than the 256 requests
# a virtio queue holds. FLUSH counts differ (QEMU's NBD client sends flushes
# of its own): each FLUSH of the import must have one of the plugin's
# within twice that reordering distance (the largest any write moved): the
# writes that cross a flush between the two logs lie within that distance
# of it, on either side, so up to twice as many may (a run where writes
# moved by 1 once had a flush 2 writes away).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools jq cmp
plan 7

wtrack_run bl --data-log --also-blklogwrites --workload pwrite --files 2 \
  --size 2M --ops 200 --fsync-every 50
check "the run exits 0 (clean report)" [ "$run_status" = 0 ]
run=$T/bl
check "the run left blklog.bin, not empty" test -s "$run/blklog.bin"

check "wtrack import reads blklog.bin" \
  "$WTRACK" import dm-log-writes "$run/blklog.bin" "$T/imp.wtlog"
"$WTRACK" replay "$T/imp.wtlog" --base "$run/base.img" --out "$T/imp.img"
check "the imported log replayed on base.img equals disk.img" cmp "$T/imp.img" "$run/disk.img"

# "W key" or "F" lines (with t_start t_end from the plugin's log); the key
# is a write's type, offset, length and hashes.
records () {
  "$WTRACK" dump --json "$1" | jq -r 'select(.seq) |
    select(.type == "WRITE" or .type == "ZERO" or .type == "TRIM" or .type == "FLUSH") |
    [if .type == "FLUSH" then "F", "-" else "W",
       ([.type, .offset, .length, (.hashes // [] | join(":"))] | map(tostring) | join("/")) end,
     .t_start, .t_end] | @tsv'
}
records "$T/imp.wtlog" >"$T/imp.recs"
records "$run/writes.wtlog" >"$T/wt.recs"
cat >"$T/compare.awk" <<'EOF'
# File 1: the import; file 2: the plugin's log. A write is its key (type,
# offset, length, hashes) and its occurrence number (the same content may be
# written twice).
FNR == NR {
  if ($1 == "F") { impflush[++nif] = niw; next }
  key = $2 "#" (++occ1[$2]); imp[key] = ++niw; next
}
$1 == "F" { fplace[++nwf] = nww; next }
{
  key = $2 "#" (++occ2[$2]); ++nww; o = (key in imp) ? imp[key] : -1
  if (o < 0) { missing++; next }
  d = o > nww ? o - nww : nww - o
  if (d > maxd) maxd = d
  split($2, f, "/")
  for (s = int(f[2] / 512); s * 512 < f[2] + f[3]; s++) {
    if ((s in last) && last[s] > o) overlap_swapped++
    last[s] = o
  }
}
END {
  if (maxd < 1) maxd = 1
  for (i = 1; i <= nif; i++) {
    found = 0
    for (g = 1; g <= nwf && !found; g++) {
      d = impflush[i] - fplace[g]; if (d < 0) d = -d
      found = d <= 2 * maxd
    }
    if (!found) unmatched++
  }
  printf "writes import=%d plugin=%d missing=%d\n", niw, nww, missing + 0
  printf "order overlapping_swapped=%d max_displacement=%d\n", overlap_swapped + 0, maxd
  printf "flushes import=%d plugin=%d unmatched=%d\n", nif, nwf, unmatched + 0
}
EOF
awk -F'\t' -f "$T/compare.awk" "$T/imp.recs" "$T/wt.recs" >"$T/compare.out"
sed 's/^/#   /' "$T/compare.out" >&2
check "both logs hold the same writes, sector hashes included (more than 1000)" \
  grep -Eq '^writes import=([0-9]{4,}) plugin=\1 missing=0$' "$T/compare.out"
check "writes to a common sector are in the same order; no write moved more than 256 places" \
  grep -Eq '^order overlapping_swapped=0 max_displacement=([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-6])$' \
    "$T/compare.out"
check "the import has more than 8 flushes (4 fsyncs of 2 files), each matching one of the plugin's" \
  grep -Eq '^flushes import=(9|[1-9][0-9]+) plugin=[0-9]+ unmatched=0$' "$T/compare.out"

rm -f "$T"/*.img
done_testing
