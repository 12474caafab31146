#!/bin/bash
# dm-log-writes interchange on crafted logs (tests/tools/craftlog): what the
# reader accepts, at its limits and one past (doc/design.md, "Limits of what
# the readers accept"); import of a large entry in bounded memory, split
# into WRITE records of at most 8 MiB; export --base of a huge unaligned
# ZERO in bounded memory.
. "$(dirname "$0")/lib.sh"
require_tools jq truncate cmp
require_built "$WTRACK" "$TOP/tests/tools/craftlog"
[ -x /usr/bin/time ] || skip_all "missing tool: /usr/bin/time"
plan 21
CRAFT=$TOP/tests/tools/craftlog
LIMIT_KB=$((48 * 1024))

# import_ok NAME ENTRY...: crafts NAME.dm (512-byte sectors) and imports it;
# the status in $status, stderr in $T/NAME.err.
import_dm () {
  local name=$1; shift
  "$CRAFT" dmlog "$T/$name.dm" 512 "$@"
  "$WTRACK" import dm-log-writes "$T/$name.dm" "$T/$name.wtlog" 2>"$T/$name.err"
  status=$?
}

# MARK text: at most a sector less the 32-byte entry header.
import_dm mark480 marklen:480 flush
check "a MARK of 480 bytes (512-byte sectors) is imported" test "$status" = 0
check "... whole, as a 480-byte MARK" \
  grep -q "MARK.*$(printf 'm%.0s' $(seq 480))" <("$WTRACK" dump --channel "$T/mark480.wtlog.channel.bin" "$T/mark480.wtlog" 2>&1)
import_dm mark481 flush marklen:481
check "a MARK of 481 bytes is refused (exit 2)" test "$status" = 2
check "... naming the entry and its byte" \
  grep -q 'mark481.dm: bad entry 1 at byte 1024: MARK of 481 bytes does not fit its sector' "$T/mark481.err"

# An entry's range: every byte offset must fit an off_t, so the range ends
# at sector floor((2^63 - 1) / 512) = 2^54 - 1 at most.
import_dm range-limit discard:$(( (1 << 54) - 2 )):1
check "a DISCARD ending at sector 2^54 - 1 is imported" test "$status" = 0
check "... as a TRIM of its sector" \
  grep -q "TRIM .* $(( ((1 << 54) - 2) * 512 )) *512 " <("$WTRACK" dump "$T/range-limit.wtlog")
import_dm range-over flush discard:$(( (1 << 54) - 1 )):1
check "one sector further is refused (exit 2)" test "$status" = 2
check "... naming the entry, its byte and the range" \
  grep -q "bad entry 1 at byte 1024: range $(( (1 << 54) - 1 ))+1 sectors ends past byte 2^63" \
  "$T/range-over.err"

# An entry's data: all of it must lie in the file.
"$CRAFT" dmlog "$T/data.dm" 512 flush write:8:16
"$WTRACK" import dm-log-writes "$T/data.dm" "$T/data.wtlog"
check "a write entry whose data ends at the end of the file is imported" test $? = 0
truncate -s -512 "$T/data.dm"
"$WTRACK" import dm-log-writes "$T/data.dm" "$T/data.wtlog" 2>"$T/data.err"
check "one sector of it missing is refused (exit 2)" test $? = 2
check "... naming the entry and its byte" \
  grep -q 'bad entry 1 at byte 1024: cut short: its data runs past the end of the log' "$T/data.err"

# A FLUSH on a write entry is a preflush: a FLUSH record before the write.
import_dm preflush write:0:8 fwrite:8:8
check "a write entry with FLUSH is imported as FLUSH then WRITE" \
  test "$status" = 0 -a "$("$WTRACK" dump --json "$T/preflush.wtlog" |
    jq -s -c '[.[] | select(.seq and .type != "OPEN" and .type != "CLOSE") | [.type, .offset]]')" \
    = '[["WRITE",0],["FLUSH",0],["WRITE",4096]]'

# A 128 MiB entry (a hole in a sparse file): read and logged 8 MiB at a
# time, never whole (it was read whole, and past 4 GiB its record size
# wrapped).
"$CRAFT" dmlog "$T/big.dm" 512 write:2048:262144 flush
/usr/bin/time -v -o "$T/time.txt" "$WTRACK" import dm-log-writes "$T/big.dm" "$T/big.wtlog"
check "import of a 128 MiB write entry exits 0" test $? = 0
rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$T/time.txt")
diag "import of a 128 MiB entry: max RSS $rss KiB"
check "... in under $((LIMIT_KB / 1024)) MiB of memory ($rss KiB)" test "$rss" -lt $LIMIT_KB
"$WTRACK" dump "$T/big.wtlog" | awk '$4 == "WRITE" { if ($7 != 1048576 + sum) bad++; n++;
  sum += $8; if ($8 > max) max = $8 } END { print n, sum, max, bad + 0 }' >"$T/big.writes"
check "... as 16 WRITE records of 8 MiB, in order, 128 MiB in all" \
  test "$(cat "$T/big.writes")" = "16 134217728 8388608 0"
truncate -s $(( (1 << 20) + (128 << 20) )) "$T/zero.img"
check "... whose hashes match the zeroes it wrote" \
  "$WTRACK" verify "$T/big.wtlog" "$T/zero.img"
rm -f "$T/big.dm" "$T/big.wtlog" "$T/zero.img"

# export --base of an unaligned 256 MiB ZERO: its edge sectors read back,
# the whole sectors between written as zeroes (a hole in the dm-log-writes
# file), in bounded memory (it read all of them back into memory).
truncate -s 257M "$T/base.img"
"$CRAFT" wtlog "$T/zero.wtlog" 257M write:0:1M zero:100:256M flush
/usr/bin/time -v -o "$T/time.txt" "$WTRACK" export --format dm-log-writes \
  --base "$T/base.img" "$T/zero.wtlog" "$T/zero.dm"
check "export --base of an unaligned 256 MiB ZERO exits 0" test $? = 0
rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$T/time.txt")
diag "export of an unaligned 256 MiB ZERO: max RSS $rss KiB"
check "... in under $((LIMIT_KB / 1024)) MiB of memory ($rss KiB)" test "$rss" -lt $LIMIT_KB
"$WTRACK" import dm-log-writes "$T/zero.dm" "$T/zero-back.wtlog" --disk-size $((257 << 20))
"$WTRACK" replay "$T/zero.wtlog" --base "$T/base.img" --out "$T/a.img"
"$WTRACK" replay "$T/zero-back.wtlog" --base "$T/base.img" --out "$T/b.img"
check "... and its import replays to the same disk (its first 2 MiB)" \
  cmp -n 2M "$T/a.img" "$T/b.img"
check "... (and its last MiB)" cmp -i 256M "$T/a.img" "$T/b.img"
"$WTRACK" dump "$T/zero-back.wtlog" | awk '$4 == "WRITE" { print $7 "+" $8 }' >"$T/zero.writes"
# Imported, the entries of zeroes are writes: the whole sectors come back
# as 8 MiB WRITE records.
check "... as the write, the edge sector, the whole sectors, the edge sector" \
  test "$(head -n 3 "$T/zero.writes" | tr '\n' ' ')$(tail -n 1 "$T/zero.writes")" \
       = "0+1048576 0+512 512+8388608 268435456+512" \
       -a "$(wc -l <"$T/zero.writes")" = 35
done_testing
