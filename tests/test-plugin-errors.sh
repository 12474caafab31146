#!/bin/bash
# The plugin when things go wrong: a read-only image, a full file system
# under the log, a log that cannot be created, bad options.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io nbdsh jq cmp mount umount timeout
require_built "$PLUGIN" "$WTRACK"
[ "$(id -u)" = 0 ] || skip_all "needs root to mount the small tmpfs file systems"
plan 31

# nbdkit_fails NAME WANT ARGS...: nbdkit must refuse to start, with a message
# containing WANT.
nbdkit_fails () {
  local name=$1 want=$2; shift 2
  timeout 20 nbdkit -f -U "$T/$name.sock" "$PLUGIN" "$@" >"$T/$name.out" 2>&1
  local status=$?
  if [ $status -eq 0 ] || [ $status -eq 124 ]; then
    diag "$name: nbdkit exit status $status"
    return 1
  fi
  grep -qF -- "$want" "$T/$name.out" || { diag "$name: no \"$want\" in:"; cat "$T/$name.out" >&2; return 1; }
}

truncate -s 16M "$T/disk.img"

# 1. A read-only image (a read-only file system: root ignores file modes):
#    served read-only, writes refused, nothing logged, the image untouched.
mkdir "$T/ro"
# (each mount is undone at exit after the servers started later stopped)
mount -t tmpfs -o size=32M tmpfs "$T/ro" && on_exit umount "$T/ro"
head -c 16M /dev/urandom >"$T/ro/disk.img"
mount -o remount,ro "$T/ro"
cp "$T/ro/disk.img" "$T/ro-copy.img"
start_nbdkit ro "$T/ro.sock" "$PLUGIN" "$T/ro/disk.img" log="$T/ro.wtlog"
check_fails "read-only image: qemu-io cannot write" \
  qemu-io -f raw "nbd+unix:///?socket=$T/ro.sock" -c 'write -P 0x11 0 4k'
check "read-only image: reads work" \
  qemu-io -f raw -r "nbd+unix:///?socket=$T/ro.sock" -c 'read 0 4k'
stop_nbdkit ro
check "read-only image: unchanged" cmp "$T/ro/disk.img" "$T/ro-copy.img"
check "read-only image: the log has no WRITE, and is closed" \
  test "$("$WTRACK" dump --json "$T/ro.wtlog" | jq -s -c '[([.[] | select(.type == "WRITE")] | length), .[-1].end]')" = '[0,"closed"]'

# nbdkit -r: the same through nbdkit's own read-only switch.
cp "$T/ro-copy.img" "$T/rw.img"
start_nbdkit r "$T/r.sock" -r "$PLUGIN" "$T/rw.img" log="$T/r.wtlog"
check_fails "nbdkit -r: qemu-io cannot write" \
  qemu-io -f raw "nbd+unix:///?socket=$T/r.sock" -c 'write -P 0x11 0 4k'
stop_nbdkit r
check "nbdkit -r: image unchanged" cmp "$T/rw.img" "$T/ro-copy.img"

# 2. The log's file system fills up: the write that does not fit fails with
#    ENOSPC, every later one with EIO; all that was acknowledged is logged.
#    The writes start 256 bytes into their 64 KiB: not whole sectors, so
#    data=on keeps their bytes in the log (a whole-sector one would go
#    into the image alone, IN_IMAGE, and never fill the log).
mkdir "$T/full"
mount -t tmpfs -o size=1M tmpfs "$T/full" && on_exit umount "$T/full"
truncate -s 16M "$T/base.img"
cp "$T/base.img" "$T/disk.img"
start_nbdkit full "$T/full.sock" "$PLUGIN" "$T/disk.img" log="$T/full/writes.wtlog" data=on
nbdsh -u "nbd+unix:///?socket=$T/full.sock" -c '
import errno, sys
h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)
acked = open("'"$T/acked.txt"'", "w")
errors = open("'"$T/errors.txt"'", "w")
for n in range(64):
    try:
        h.pwrite(bytes([n + 1]) * 65536, n * 65536 + 256)
        acked.write("%d\n" % n)
    except nbd.Error as e:
        errors.write("%d %s\n" % (n, errno.errorcode.get(e.errno, e.errno)))
' 2>"$T/full-client.err"
stop_nbdkit full
nacked=$(wc -l <"$T/acked.txt")
diag "log on a 1 MiB tmpfs: $nacked writes of 64 KiB acknowledged"
check "full log: some writes were acknowledged" test "$nacked" -ge 5
check "full log: the first failure is ENOSPC" \
  test "$(head -1 "$T/errors.txt" | cut -d' ' -f2)" = ENOSPC
check "full log: every later write fails with EIO" \
  test "$(sed 1d "$T/errors.txt" | cut -d' ' -f2 | sort -u)" = EIO
check "full log: writes fail from the first failure on" \
  test "$(head -1 "$T/errors.txt" | cut -d' ' -f1)" = "$nacked"
check "full log: nbdkit said why" grep -q 'write: log: .*No space left on device' "$T/full.log"
"$WTRACK" dump --json "$T/full/writes.wtlog" >"$T/full.json" 2>/dev/null
check "full log: the log reads up to its last complete record" \
  test "$(jq -r 'select(.end) | .end' "$T/full.json")" != closed
check "full log: every acknowledged write has its WRITE record" \
  test "$(jq -r 'select(.type == "WRITE") | (.offset - 256) / 65536' "$T/full.json" | head -n "$nacked" | paste -sd,)" \
       = "$(paste -sd, "$T/acked.txt")"
"$WTRACK" replay "$T/full/writes.wtlog" --base "$T/base.img" --out "$T/full-replayed.img" 2>/dev/null
check "full log: the replayed log holds every acknowledged write" \
  cmp -n $((nacked * 65536 + 256)) "$T/full-replayed.img" "$T/disk.img"

# 2b. A log on a small file system gets a ring halved to what fits (512
#     KiB on 1 MiB), and in the default mode every record goes through the
#     ring, the channel's with their bytes: a channel write whose record is
#     larger than the ring is refused with EINVAL, saying why, instead of
#     waiting for room forever (the timeout fails the test); a smaller one
#     goes through.
mkdir "$T/small"
mount -t tmpfs -o size=1M tmpfs "$T/small" && on_exit umount "$T/small"
truncate -s 16M "$T/chan.img"
start_nbdkit small "$T/small.sock" "$PLUGIN" "$T/disk.img" \
  log="$T/small/writes.wtlog" channel="$T/chan.img"
ring_bytes=$(( $(stat -c %s "$T/small/writes.wtlog.ring") - 4096 ))
timeout 60 env PATH="/usr/bin:$PATH" nbdsh -u "nbd+unix:///channel?socket=$T/small.sock" -c '
import sys
ring = '"$ring_bytes"'
for n, size in ((1, ring), (2, ring // 2)):
    try:
        h.pwrite(bytes([n]) * size, 0)
        print("ok")
    except nbd.Error as e:
        print(e.errno)
' >"$T/small.out" 2>&1
# A request stuck for room keeps nbdkit from exiting: fail, do not hang.
[ "$(wc -l <"$T/small.out")" = 2 ] || kill -9 "$(cat "$T/small.pid")"
stop_nbdkit small
diag "small ring: $ring_bytes bytes; replies: $(paste -sd' ' "$T/small.out")"
check "small ring: a channel write of the ring's size is refused with EINVAL" \
  test "$(sed -n 1p "$T/small.out")" = EINVAL
check "small ring: nbdkit said why" \
  grep -q "write: log: .*: a record of [0-9]* bytes cannot go through the ring of $ring_bytes bytes" "$T/small.log"
check "small ring: a channel write of half the ring goes through" \
  test "$(sed -n 2p "$T/small.out")" = ok

# 3. A log that cannot be created stops nbdkit at start-up.
check "missing log directory: nbdkit refuses to start, naming the path" \
  nbdkit_fails nodir "$T/nodir/writes.wtlog: No such file or directory" \
    "$T/disk.img" log="$T/nodir/writes.wtlog"

# 4. Bad options, each with a message naming it.
check "unknown parameter" nbdkit_fails bogus "unknown parameter: bogus" \
  "$T/disk.img" log="$T/x.wtlog" bogus=1
check "channel-size that is not a size" nbdkit_fails csize "channel-size: abc: not a size" \
  "$T/disk.img" log="$T/x.wtlog" channel="$T/ch.bin" channel-size=abc
check "channel-size that is not a multiple of 512" nbdkit_fails csize512 \
  "channel-size: 1000: must be a positive multiple of 512" \
  "$T/disk.img" log="$T/x.wtlog" channel="$T/ch.bin" channel-size=1000
check "channel-size without channel" nbdkit_fails nochan "channel-size given without channel" \
  "$T/disk.img" log="$T/x.wtlog" channel-size=1M
check "data=maybe" nbdkit_fails data "data: maybe: expected on or off" \
  "$T/disk.img" log="$T/x.wtlog" data=maybe
check "stage=sometimes" nbdkit_fails stage "stage: sometimes: expected on or off" \
  "$T/disk.img" log="$T/x.wtlog" stage=sometimes
check "no log=" nbdkit_fails nolog "no log: give log=" "$T/disk.img"
check "a disk image that does not exist" nbdkit_fails nodisk "$T/nosuch.img" \
  "$T/nosuch.img" log="$T/x.wtlog"
check "an unknown fault kind" nbdkit_fails fkind "unknown kind: explode" \
  "$T/disk.img" log="$T/x.wtlog" fault=explode
check "a bad fault selector" nbdkit_fails fsel "nth=0: must be at least 1" \
  "$T/disk.img" log="$T/x.wtlog" fault=lie:nth=0
check "a fault trigger by write count of 0" nbdkit_fails ffrom "from=0: must be at least 1" \
  "$T/disk.img" log="$T/x.wtlog" fault=vanish:from=0
check "a fault probability out of range" nbdkit_fails fp "p=2: expected a number from 0 to 1" \
  "$T/disk.img" log="$T/x.wtlog" fault=eio:p=2
check "a faults file that cannot be created" nbdkit_fails ffile "$T/nodir/faults.txt" \
  "$T/disk.img" log="$T/x.wtlog" fault=eio faults="$T/nodir/faults.txt"
done_testing
