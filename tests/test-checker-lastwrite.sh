#!/bin/bash
# wtrack verify and check --no-manifest keep ZERO and TRIM records as
# ranges, not a table slot per sector: a 512 MiB TRIM (one 64-byte record)
# costs what a 4 KiB one does (max RSS, /usr/bin/time -v). And the ranges
# give each sector its last write: a crafted log of overlapping writes,
# aligned and unaligned ZEROs and TRIMs verifies clean against its own
# replay, and a sector changed under a zeroed range is named.
. "$(dirname "$0")/lib.sh"
require_tools jq truncate dd
require_built "$WTRACK" "$TOP/tests/tools/craftlog"
[ -x /usr/bin/time ] || skip_all "missing tool: /usr/bin/time"
plan 10
CRAFT=$TOP/tests/tools/craftlog
LIMIT_KB=$((32 * 1024))

"$CRAFT" wtlog "$T/trim.wtlog" 513M write:0:4096 trim:4096:512M zero:1000:3000 flush
truncate -s 513M "$T/zero.img"
/usr/bin/time -v -o "$T/time.txt" "$WTRACK" verify "$T/trim.wtlog" "$T/zero.img" >"$T/verify.out"
status=$?
tail -n 1 "$T/verify.out" | sed 's/^/#   /' >&2
rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$T/time.txt")
diag "verify of a 512 MiB TRIM: exit $status, max RSS $rss KiB"
check "verify of a 512 MiB TRIM over zeroes: a sector differs (the write's first)" test "$status" = 1
check "... in under $((LIMIT_KB / 1024)) MiB of memory ($rss KiB)" test "$rss" -lt $LIMIT_KB
check "... every touched sector counted, the two partly zeroed ones unknown" \
  grep -q "^# 1048584 sectors touched by 4 records, 1048582 compared (2 partly zeroed, unknown): 1 differ in 1 runs" \
  "$T/verify.out"
/usr/bin/time -v -o "$T/time.txt" "$WTRACK" check --no-manifest --log "$T/trim.wtlog" \
  --image "$T/zero.img" --json "$T/nomf.json" >"$T/nomf.out"
status=$?
rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$T/time.txt")
diag "check --no-manifest of a 512 MiB TRIM: exit $status, max RSS $rss KiB"
check "check --no-manifest of it finds the same sector" \
  test "$status" = 1 -a "$(jq -c '[.bad_sectors, .compared_sectors]' "$T/nomf.json")" = '[1,1048582]'
check "... in under $((LIMIT_KB / 1024)) MiB of memory ($rss KiB)" test "$rss" -lt $LIMIT_KB
rm -f "$T/zero.img"

# Overlaps: later records win sector by sector, whichever kind they are.
"$CRAFT" wtlog "$T/mix.wtlog" 1M write:0:64K zero:1000:5000 write:4096:4096 \
  trim:2048:100000 zero:300:10 write:65536:4096 zero:70000:512 trim:60000:2000 \
  write:61440:512 zero:0:700 write:98304:8192:3 zero:99000:4000
head -c 1M /dev/urandom >"$T/rnd.img"
"$WTRACK" replay "$T/mix.wtlog" --base "$T/rnd.img" --out "$T/mix.img"
"$WTRACK" verify "$T/mix.wtlog" "$T/mix.img" >"$T/mix.out"
check "the overlapping log verifies clean against its replay" test $? = 0
check "... 240 sectors touched, 7 partly zeroed" \
  grep -q '^# 240 sectors touched by 14 records, 233 compared (7 partly zeroed, unknown): 0 differ' "$T/mix.out"
# Sector 150 was last trimmed (seq 4); sector 130 last written (seq 6),
# after the TRIM of seq 4 that covered it.
printf 'X' | dd of="$T/mix.img" bs=1 seek=$((150 * 512 + 7)) conv=notrunc 2>/dev/null
printf 'Y' | dd of="$T/mix.img" bs=1 seek=$((130 * 512 + 9)) conv=notrunc 2>/dev/null
"$WTRACK" verify "$T/mix.wtlog" "$T/mix.img" >"$T/mix.out"
check "a byte changed under the TRIM and one under the later WRITE: exit 1" test $? = 1
check "... naming sector 150 as trimmed by seq 4" grep -q '^  sector 150: .* (seq 4, TRIM)$' "$T/mix.out"
check "... and sector 130 as written by seq 6" grep -q '^  sector 130: .* (seq 6)$' "$T/mix.out"
done_testing
