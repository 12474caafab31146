#!/bin/bash
# dm-log-writes interchange: a log QEMU's blklogwrites driver wrote, imported,
# replays to QEMU's own disk and exports back to the same bytes; a log the
# plugin wrote (with the guest's MARKs) survives export then import: the
# same requests, the same disk, the same MARKs.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io jq cmp truncate
require_built "$PLUGIN" "$WTRACK" "$GUEST"
plan 21

# QEMU's blklogwrites: the log file must exist (the file driver opens, not
# creates); log-sector-size=512 matches wtrack's sectors.
truncate -s 8M "$T/qdisk.img"
: >"$T/qemu.dmlog"
check "qemu-io writes through blklogwrites" \
  qemu-io --image-opts "driver=blklogwrites,file.driver=file,file.filename=$T/qdisk.img,log.driver=file,log.filename=$T/qemu.dmlog,log-sector-size=512" \
    -c 'write -P 0x11 0 64k' -c 'flush' -c 'write -P 0x22 1M 4k' \
    -c 'write -P 0x44 1000 3000' -c 'write -z 2M 1M' -c 'discard 0 4k' \
    -c 'write -f -P 0x33 3M 8k' -c 'write -P 0x55 6M 1M' -c 'flush'
check "wtrack import reads QEMU's log" \
  "$WTRACK" import dm-log-writes "$T/qemu.dmlog" "$T/qemu.wtlog"
truncate -s 8M "$T/zero.img"
"$WTRACK" replay "$T/qemu.wtlog" --base "$T/zero.img" --out "$T/qreplay.img"
check "the imported log replays onto zeroes to QEMU's disk" cmp "$T/qreplay.img" "$T/qdisk.img"
"$WTRACK" dump --json "$T/qemu.wtlog" >"$T/qemu.json"
check "wtrack dump reads the imported log to its end (closed)" \
  test "$(jq -r 'select(.end) | .end' "$T/qemu.json")" = closed
check "the import has NOTIME and no timestamps" \
  test "$(jq -s -c '[(.[0].header.flags | index("NOTIME") != null),
                    ([.[] | select(.seq) | .t_start + .t_end] | add)]' "$T/qemu.json")" = '[true,0]'
check "the import has QEMU's discard, flushes and writes, in order" \
  test "$(jq -s -c '[.[] | select(.type == "TRIM" or (.type == "WRITE" and .length >= 65536))
                   | [.type, .offset, .length]]' "$T/qemu.json")" \
       = '[["WRITE",0,65536],["WRITE",2097152,1048576],["TRIM",0,4096],["WRITE",6291456,1048576]]' \
    -a "$(jq -s '[.[] | select(.type == "FLUSH")] | length' "$T/qemu.json")" -ge 2
check "wtrack check --no-manifest finds the disk clean" \
  "$WTRACK" check --no-manifest --log "$T/qemu.wtlog" --image "$T/qdisk.img"
cp "$T/qdisk.img" "$T/qchanged.img"
printf '\x5a' | dd of="$T/qchanged.img" bs=1 seek=$((1048576 + 5)) conv=notrunc status=none
"$WTRACK" check --no-manifest --log "$T/qemu.wtlog" --image "$T/qchanged.img" >"$T/qcheck.out"
check "... and sees one changed sector (exit 1, sector 2048)" \
  test $? -eq 1 -a -n "$(grep 'sectors 2048-2048 (1)' "$T/qcheck.out")"
"$WTRACK" export --format dm-log-writes "$T/qemu.wtlog" "$T/qemu-again.dmlog"
check "exporting the import gives QEMU's log back byte for byte" \
  cmp "$T/qemu-again.dmlog" "$T/qemu.dmlog"

# The plugin's log with the guest's MARKs.
sock=$T/nbd.sock
head -c 8M /dev/urandom >"$T/base.img"
cp "$T/base.img" "$T/disk.img"
start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$T/writes.wtlog" data=on \
  channel="$T/channel.bin" channel-size=1M
send_mark () {
  local before after
  before=$(stat -c %s "$T/guest-channel" 2>/dev/null || echo 0)
  "$GUEST" mark --channel-file "$T/guest-channel" "$1" || return 1
  after=$(stat -c %s "$T/guest-channel")
  nbdsh -u "nbd+unix:///channel?socket=$sock" -c "
with open('$T/guest-channel', 'rb') as f:
    f.seek($before)
    h.pwrite(f.read($after - $before), $before)
"
}
send_mark "start"
qemu-io -f raw "nbd+unix:///?socket=$sock" -c 'write -P 0x11 0 64k' \
  -c 'write -z 128k 64k' -c 'discard 512k 128k' -c 'flush' >/dev/null
send_mark "after a"
qemu-io -f raw "nbd+unix:///?socket=$sock" -c 'write -f -P 0x33 1M 4k' \
  -c 'write -P 0x44 2M 1M' -c 'flush' >/dev/null
stop_nbdkit wt

check "export --channel writes the plugin's log as dm-log-writes" \
  "$WTRACK" export --format dm-log-writes --channel "$T/channel.bin" \
    "$T/writes.wtlog" "$T/plugin.dmlog"
check "import reads it back, MARKs into a channel" \
  "$WTRACK" import dm-log-writes --channel "$T/back.channel" "$T/plugin.dmlog" "$T/back.wtlog"
"$WTRACK" replay "$T/back.wtlog" --base "$T/base.img" --out "$T/back.img"
check "the round trip replays to the plugin's disk" cmp "$T/back.img" "$T/disk.img"
# What dm-log-writes carries: writes (a ZERO is a write of zeroes), their
# FUA, discards, flushes and MARKs, in order.
requests () {
  "$WTRACK" dump --json "$1" | jq -c 'select(.seq) | select(.type != "OPEN" and .type != "CLOSE")
    | if .type == "CHANNEL" then "MARK"
      else [(if .type == "ZERO" then "WRITE" else .type end), .offset, .length,
            (.flags | index("FUA") != null)] end'
}
"$WTRACK" dump --channel "$T/channel.bin" | grep -c '^msg .* MARK' >"$T/nmarks"
check "the round trip keeps every request, in order" \
  cmp <(requests "$T/writes.wtlog") <(requests "$T/back.wtlog")
check "... and the two MARKs, where they were" test "$(cat "$T/nmarks")" = 2
"$WTRACK" replay "$T/writes.wtlog" --base "$T/base.img" --out "$T/a1.img" \
  --channel "$T/channel.bin" --to-mark "after a"
"$WTRACK" replay "$T/back.wtlog" --base "$T/base.img" --out "$T/a2.img" \
  --channel "$T/back.channel" --to-mark "after a"
check "replay --to-mark gives the same disk on both sides" cmp "$T/a1.img" "$T/a2.img"
"$WTRACK" export --format dm-log-writes --channel "$T/back.channel" \
  "$T/back.wtlog" "$T/plugin-again.dmlog"
check "export of the import is the first export, byte for byte" \
  cmp "$T/plugin-again.dmlog" "$T/plugin.dmlog"

# Unaligned requests: dm-log-writes holds whole sectors, read from --base.
start_nbdkit un "$T/un.sock" "$PLUGIN" "$T/disk.img" log="$T/un.wtlog" data=on
cp "$T/disk.img" "$T/un-base.img"
nbdsh -u "nbd+unix:///?socket=$T/un.sock" -c '
h.set_strict_mode(0)
h.pwrite(b"\x66" * 100, 3 * 1048576 + 10)
h.zero(700, 3 * 1048576 + 20000)
'
stop_nbdkit un
out=$("$WTRACK" export --format dm-log-writes "$T/un.wtlog" "$T/un.dmlog" 2>&1)
check "an unaligned write without --base is an error naming its seq" \
  test $? -eq 2 -a -n "$(grep 'seq [0-9]*: WRITE .* not sector-aligned' <<<"$out")"
"$WTRACK" export --format dm-log-writes --base "$T/un-base.img" "$T/un.wtlog" "$T/un.dmlog" &&
  "$WTRACK" import dm-log-writes "$T/un.dmlog" "$T/un-back.wtlog" --disk-size $((8 << 20)) &&
  "$WTRACK" replay "$T/un-back.wtlog" --base "$T/un-base.img" --out "$T/un-back.img"
check "with --base, the whole sectors replay to the disk" cmp "$T/un-back.img" "$T/disk.img"

out=$("$WTRACK" import dm-log-writes "$T/base.img" "$T/x.wtlog" 2>&1)
check "import of something else is refused, naming the magic" \
  test $? -eq 2 -a -n "$(grep 'not a dm-log-writes log: magic' <<<"$out")"
head -c $(( $(stat -c %s "$T/qemu.dmlog") - 3000 )) "$T/qemu.dmlog" >"$T/cut.dmlog"
out=$("$WTRACK" import dm-log-writes "$T/cut.dmlog" "$T/cut.wtlog" 2>&1)
check "a cut log is exit 2, naming the entry and its byte" \
  test $? -eq 2 -a -n "$(grep 'bad entry [0-9]* at byte [0-9]*: cut short' <<<"$out")"
check "... and the entries before the cut are imported" \
  test "$("$WTRACK" dump --json "$T/cut.wtlog" | jq -s '[.[] | select(.type == "WRITE")] | length')" -ge 5

done_testing
