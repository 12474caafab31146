#!/bin/bash
# The plugin under requests a hostile NBD client may send: unaligned
# write-zeroes of 4 GiB - 1 (the largest an NBD request can say) with
# data=on. Each must leave a log every reader reads to its end (no record
# too large for its size field), replaying to the image, with nbdkit's
# memory bounded whatever the request's length.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh jq truncate /usr/bin/python3
require_built "$PLUGIN" "$WTRACK"
plan 13

sock=$T/nbd.sock
log=$T/writes.wtlog
big=$((4 * 1024 * 1024 * 1024 - 1))             # 4 GiB - 1
disk_size=$((4 * 1024 * 1024 * 1024 + 1048576))  # room for it unaligned

# A sparse disk with random bytes where the zeroes land (and past them), so
# zeroing changes something and a wrong replay shows.
truncate -s "$disk_size" "$T/disk.img"
for mib in 0 2048 4095 4096; do
  head -c 1M /dev/urandom |
    dd of="$T/disk.img" bs=1M seek="$mib" conv=notrunc status=none
done
cp --sparse=always "$T/disk.img" "$T/base.img"

start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data=on
pid=$(cat "$T/wt.pid")

# The zeroes: plain (zeroed range), with FUA and a hole allowed, an
# unaligned fast zero (refused: writing edges is not fast), and writes after
# them, which must be readable in the log too.
check "nbdsh sends 4 GiB - 1 unaligned zeroes, then writes" \
  nbdsh -u "nbd+unix:///?socket=$sock" -c "
h.set_strict_mode(0)
h.pwrite(b'\x11' * 3000, 100)
h.zero($big, 700, nbd.CMD_FLAG_NO_HOLE)
h.pwrite(b'\x22' * 5000, 2 * 1048576 + 3)
h.zero($big, 4109, nbd.CMD_FLAG_FUA)
try:
    h.zero($big, 1000, nbd.CMD_FLAG_FAST_ZERO)
    raise SystemExit('an unaligned fast zero was not refused')
except nbd.Error as e:
    assert e.errno == 'ENOTSUP' or e.errnum == 95, e
h.pwrite(b'\x33' * 4096, 4096 * 1048576 + 512 * 1024)
h.zero(1000, 3 * 1048576 + 7)
h.flush()
"
hwm_kib=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status")
check "nbdkit's peak memory stays under 256 MiB (VmHWM ${hwm_kib:-?} KiB)" \
  test "${hwm_kib:-999999999}" -lt $((256 * 1024))
stop_nbdkit wt

"$WTRACK" dump --json "$log" >"$T/dump.json" 2>"$T/dump.err"
check "wtrack dump reads the whole log" test $? -eq 0
check "the log is closed, not torn" \
  test "$(jq -r 'select(.end) | .end' "$T/dump.json")" = closed
recs () { jq -c 'select(.seq)' "$T/dump.json"; }

# same_image A B: equal size and bytes; ranges that are holes in both are
# zeroes in both and skipped (cmp reads 4 GiB of holes for half a minute).
same_image () {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import os, sys
fa, fb = (os.open(p, os.O_RDONLY) for p in sys.argv[1:3])
size = os.fstat(fa).st_size
if os.fstat(fb).st_size != size:
    sys.exit("# sizes differ")
def data_ranges(fd):
    pos, out = 0, []
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        out.append((start, end))
        pos = end
    return out
for start, end in sorted(data_ranges(fa) + data_ranges(fb)):
    pos = start
    while pos < end:
        n = min(1 << 20, end - pos)
        if os.pread(fa, n, pos) != os.pread(fb, n, pos):
            sys.exit("# differ in the MiB at byte %d" % pos)
        pos += n
PY
}
# Every record is small: the edges are under a sector, the middle a ZERO.
# A record's size: from its offset to the next one's (or the file's end).
largest_record () {
  recs | jq -s --argjson size "$(stat -c %s "$log")" \
    '[.[].log_offset] + [$size] | [.[:-1], .[1:]] | transpose
     | map(.[1] - .[0]) | max'
}
check "no record of the log reaches 1 MiB (largest $(largest_record) bytes)" \
  test "$(largest_record)" -lt 1048576
end=$((700 + big)); hi=$((end / 512 * 512))
check "the zero is a WRITE of its head, a ZERO of its whole sectors, a WRITE of its tail" \
  test "$(recs | jq -s -c "[.[] | select(.offset >= 700 and .offset <= $hi
                                  and (.type == \"ZERO\" or (.type == \"WRITE\" and .offset != 100)))
                            | [.type, .offset, .length, (.hashes // [] | length)]] | .[0:3]")" \
       = "[[\"WRITE\",700,324,1],[\"ZERO\",1024,$((hi - 1024)),0],[\"WRITE\",$hi,$((end - hi)),1]]"
fua_tail=$(((4109 + big) / 512 * 512))
check "with FUA, only the zero's last piece is logged with FUA" \
  test "$(recs | jq -s -c '[.[] | select(.offset == 4109 or .offset == 4608
                                        or .offset == '"$fua_tail"')
                            | [.type, (.flags | index("FUA") != null)]]')" \
       = '[["WRITE",false],["ZERO",false],["WRITE",true]]'
check "the unaligned fast zero is logged FAILED with ENOTSUP" \
  test "$(recs | jq -s '[.[] | select(.type == "ZERO" and .offset == 1000
                                     and (.flags | index("FAILED")) and .err == 95)] | length')" = 1
check "the writes after the zeroes are in the log" \
  test "$(recs | jq -s -c '[.[] | select(.type == "WRITE" and (.offset == 2097155
                                  or .offset == 4096 * 1048576 + 524288)) | .length]')" = '[5000,4096]'

check "wtrack verify: every sector matches its last logged hash" \
  "$WTRACK" verify "$log" "$T/disk.img"
check "wtrack replay on base.img" \
  "$WTRACK" replay "$log" --base "$T/base.img" --out "$T/replayed.img"
check "the replayed image equals disk.img" same_image "$T/replayed.img" "$T/disk.img"
check_fails "(and base.img does not)" same_image "$T/base.img" "$T/disk.img"
done_testing
