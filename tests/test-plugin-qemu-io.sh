#!/bin/bash
# The plugin under qemu-io (aligned and unaligned writes, write -z, discard,
# flush, FUA) and nbdsh (requests qemu would align itself, a FUA trim): the log replays
# to the image, every hash matches, seq has no gaps, both exports are logged.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io jq cmp
require_built "$PLUGIN" "$WTRACK"
plan 20

sock=$T/nbd.sock
log=$T/writes.wtlog
# A base full of random bytes, so zeroes and trims change something.
head -c 16M /dev/urandom >"$T/base.img"
cp "$T/base.img" "$T/disk.img"

start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data=on \
  channel="$T/channel.bin" channel-size=1M

check "qemu-io writes to the disk" \
  qemu-io -f raw "nbd+unix:///?socket=$sock" \
    -c 'write -P 0x11 0 64k' \
    -c 'write -P 0x22 1000 3000' \
    -c 'write -P 0x23 70000 511' \
    -c 'write -z 128k 64k' \
    -c 'write -z -u 256k 64k' \
    -c 'discard 512k 128k' \
    -c 'flush' \
    -c 'write -f -P 0x33 1M 4k' \
    -c 'write -P 0x44 2M 1M' \
    -c 'read -P 0x33 1M 4k'
check "qemu-io writes to the channel export" \
  qemu-io -f raw "nbd+unix:///channel?socket=$sock" -c 'write -P 0x55 0 1k'
# libnbd sends what it is asked: edges that are not sector-aligned.
check "nbdsh sends unaligned writes, zeroes and trims" \
  nbdsh -u "nbd+unix:///?socket=$sock" -c '
h.set_strict_mode(0)
h.pwrite(b"\x66" * 100, 3 * 1048576 + 10)
h.pwrite(b"\x67" * 5000, 3 * 1048576 + 4000)
h.zero(700, 3 * 1048576 + 20000)
h.trim(30000, 3 * 1048576 + 3000)
h.zero(65536, 4 * 1048576, nbd.CMD_FLAG_NO_HOLE)
h.trim(65536, 5 * 1048576, nbd.CMD_FLAG_FUA)
h.flush()
'
check_fails "an unknown export name is refused" \
  qemu-io -f raw "nbd+unix:///nosuch?socket=$sock" -c 'read 0 512'
# The plugin's helper thread maps the ring's pages (64 MiB, where the
# records go before the log file); the records so far fill less than 2
# MiB, so 32 MiB resident means the helper ran.
ring_rss_kib () {
  awk -v path="$log.ring" '$NF == path { m = 1; next }
                          /^[0-9a-f]+-[0-9a-f]+ / { m = 0 }
                          m && $1 == "Rss:" { kib += $2 }
                          END { print kib + 0 }' "/proc/$(cat "$T/wt.pid")/smaps"
}
prefaulted () {
  local i kib
  for i in $(seq 1 100); do
    kib=$(ring_rss_kib)
    [ "${kib:-0}" -ge 32768 ] && return 0
    sleep 0.1
  done
  diag "ring mapping resident: $(ring_rss_kib) KiB"
  return 1
}
check "the ring's pages are prefaulted" prefaulted
stop_nbdkit wt

"$WTRACK" dump --json "$log" >"$T/dump.json"
check "wtrack dump reads the whole log" test $? -eq 0
check "the log ends with the final CLOSE (closed)" \
  test "$(jq -r 'select(.end) | .end' "$T/dump.json")" = closed
recs () { jq -c 'select(.seq)' "$T/dump.json"; }
# The final CLOSE has no payload (64 bytes); the space the plugin allocated
# ahead of its records is cut off at unload.
check "the log file ends with the final CLOSE" \
  test "$(recs | jq -s '.[-1].log_offset + 64')" = "$(stat -c %s "$log")"
check "seq is 1, 2, 3, ... without gaps" \
  test "$(recs | jq -s '[.[].seq] == [range(1; length + 1)]')" = true
check "t_start <= t_end in every record" \
  test "$(recs | jq -s 'all(.t_start <= .t_end)')" = true
check "OPEN records name both exports, conns from 1" \
  test "$(recs | jq -s -c '[.[] | select(.type == "OPEN") | [.conn, .offset]]')" \
       = '[[1,0],[2,1],[3,0]]'
check "the FUA write is logged with FUA" \
  test "$(recs | jq -s '[.[] | select(.type == "WRITE" and .offset == 1048576
                            and (.flags | index("FUA")))] | length')" = 1
check "the FUA trim is logged with FUA, the others without" \
  test "$(recs | jq -s -c '[.[] | select(.type == "TRIM") | [.offset, (.flags | index("FUA") != null)]]')" \
       = "[[524288,false],[$((3 * 1048576 + 3072)),false],[$((5 * 1048576)),true]]"
check "the channel write is a CHANNEL record with its hashes" \
  test "$(recs | jq -s -c '[.[] | select(.type == "CHANNEL") | [.offset, .length, (.hashes | length)]]')" \
       = '[[0,1024,2]]'
check "an unaligned zero is logged as a WRITE with hashes" \
  test "$(recs | jq -s '[.[] | select(.type == "WRITE" and .offset == 3 * 1048576 + 20000
                            and .length == 700 and (.hashes | length) == 2)] | length')" = 1
check "an unaligned trim is shrunk to the whole sectors inside it" \
  test "$(recs | jq -s -c '[.[] | select(.type == "TRIM") | [.offset, .length]]')" \
       = "[[524288,131072],[$((3 * 1048576 + 3072)),29696],[$((5 * 1048576)),65536]]"

check "wtrack replay on base.img gives disk.img" \
  "$WTRACK" replay "$log" --base "$T/base.img" --out "$T/replayed.img"
check "replayed image equals disk.img" cmp "$T/replayed.img" "$T/disk.img"
check "wtrack verify: every sector matches its last logged hash" \
  "$WTRACK" verify "$log" "$T/disk.img"
# The same check must see one changed byte.
cp "$T/disk.img" "$T/changed.img"
printf '\x5a' | dd of="$T/changed.img" bs=1 seek=$((2 * 1048576 + 777)) conv=notrunc status=none
"$WTRACK" verify "$log" "$T/changed.img" >/dev/null 2>&1
check "wtrack verify reports one changed byte (exit 1)" test $? -eq 1
done_testing
