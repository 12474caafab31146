#!/bin/bash
# stage=on (the default): the log is the store, with data=on and with
# data=off alike.  While nbdkit serves, reads come from the plugin's index
# (the log) and the untouched image; they must return exactly what a plain
# image fed the same requests returns (nbdkit file on a copy): sectors
# written, partly overwritten, zeroed, trimmed, unaligned writes, through
# qemu-io, nbdsh and fio with verify.  The mover writes the image behind
# the requests (a flush makes it equal the plain one; at unload it does).
# With data=on the log gets the records whole; with data=off (the queue)
# without their bytes, flagged APPLIED: it ends as a hashes-only log with
# the same writes, zeroes and trims as a stage=off run's.  (The bodies
# of store_run are not indented: they hold Python in quotes.)
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io qemu-img nbdsh fio jq cmp
require_built "$PLUGIN" "$WTRACK"
plan 44

wsock=$T/wt.sock fsock=$T/file.sock

# store_run DATA: the whole story with data=DATA.
store_run () {
local data=$1
diag "data=$data"
rm -f "$T"/*.img "$T"/*.wtlog "$T"/*.sock "$T/both.out"
head -c 16M /dev/urandom >"$T/base.img"
cp "$T/base.img" "$T/disk.img"
cp "$T/base.img" "$T/plain.img"
# -v: nbdkit's debug output carries the exit's phases, checked below.
rm -f "$T/wt.log"
start_nbdkit wt "$wsock" -v "$PLUGIN" "$T/disk.img" log="$T/writes.wtlog" data="$data"
start_nbdkit file "$fsock" file "$T/plain.img"
# With data=off, a stage=off server beside them gets the same requests: its
# log is what the stripped log must become.
osock=
if [ "$data" = off ]; then
  osock=$T/off.sock
  cp "$T/base.img" "$T/off.img"
  start_nbdkit off "$osock" "$PLUGIN" "$T/off.img" log="$T/off.wtlog" stage=off
fi

# both CMD...: runs CMD with @URI@ replaced by each server's URI (and the
# stage=off server's, when there is one).
both () {
  local sock status=0
  for sock in "$wsock" "$fsock" ${osock:+"$osock"}; do
    "${@//@URI@/nbd+unix:///?socket=$sock}" >>"$T/both.out" 2>&1 || status=1
  done
  [ $status -eq 0 ] || tail -20 "$T/both.out" >&2
  return $status
}
# same_disk NAME: both exports read in full (through the servers) are equal.
same_disk () {
  qemu-img convert -f raw -O raw "nbd+unix:///?socket=$wsock" "$T/$1.wt.img" &&
    qemu-img convert -f raw -O raw "nbd+unix:///?socket=$fsock" "$T/$1.file.img" &&
    cmp "$T/$1.wt.img" "$T/$1.file.img"
}

check "qemu-io: writes, partial overwrites, zeroes, trims on both" \
  both qemu-io -f raw @URI@ \
    -c 'write -P 0x11 0 64k' \
    -c 'write -P 0x22 1000 3000' \
    -c 'write -P 0x23 70000 511' \
    -c 'write -P 0x24 4096 512' \
    -c 'write -P 0x25 8192 16k' \
    -c 'write -P 0x26 10240 1k' \
    -c 'write -z 128k 64k' \
    -c 'write -P 0x27 133000 3000' \
    -c 'write -z -u 256k 64k' \
    -c 'discard 512k 128k' \
    -c 'write -P 0x28 520k 4k' \
    -c 'write -P 0x29 1M 2M' \
    -c 'write -z 1536k 16k' \
    -c 'write -P 0x2a 1540k 1k' \
    -c 'write -f -P 0x33 5M 4k'
check "qemu-io reads back what it wrote (partly overwritten sectors)" \
  qemu-io -f raw "nbd+unix:///?socket=$wsock" \
    -c 'read -P 0x11 0 1000' -c 'read -P 0x22 1000 3000' -c 'read -P 0x24 4096 512' \
    -c 'read -P 0x25 8192 2048' -c 'read -P 0x26 10240 1k' -c 'read -P 0x25 11264 13k' \
    -c 'read -P 0 128k 1928' -c 'read -P 0x27 133000 3000' -c 'read -P 0 524288 8192' \
    -c 'read -P 0x28 520k 4k' -c 'read -P 0 1536k 4k' -c 'read -P 0x2a 1540k 1k'
check "qemu-io: the disk reads as the plain image does" same_disk qemu

# libnbd sends what it is asked: unaligned writes and zeroes, sector-edge
# overwrites, a zero over many extents, reads across every kind of extent.
check "nbdsh: unaligned writes, zeroes and trims on both" \
  both nbdsh -u @URI@ -c '
h.set_strict_mode(0)
h.pwrite(b"\x66" * 100, 3 * 1048576 + 10)
h.pwrite(b"\x67" * 5000, 3 * 1048576 + 4000)
h.zero(700, 3 * 1048576 + 20000)
h.trim(32768, 3 * 1048576 + 4096)
for i in range(64):
    h.pwrite(bytes([i]) * 777, 6 * 1048576 + i * 1000)
h.zero(30000, 6 * 1048576 + 10000)
h.pwrite(b"\x68" * 512, 6 * 1048576 + 20480)
h.zero(65536, 4 * 1048576, nbd.CMD_FLAG_NO_HOLE)
h.flush()
'
# compare_reads SEED REGION...: random reads of any alignment and length in
# the given MiB regions, from both servers, are equal.
compare_reads () {
  /usr/bin/python3 -c '
import nbd, random, sys
w = nbd.NBD(); w.connect_uri(sys.argv[1])
f = nbd.NBD(); f.connect_uri(sys.argv[2])
w.set_strict_mode(0); f.set_strict_mode(0)
rng = random.Random(int(sys.argv[3]))
regions = [int(r) for r in sys.argv[4:]]
for _ in range(2000):
    off = rng.choice(regions) * 1048576 + rng.randrange(0, 1048576)
    n = rng.randrange(1, 40000)
    if w.pread(n, off) != f.pread(n, off):
        print("# differ at %d+%d" % (off, n), file=sys.stderr); sys.exit(1)
' "nbd+unix:///?socket=$wsock" "nbd+unix:///?socket=$fsock" "$@"
}
check "nbdsh: reads of every alignment match the plain image" compare_reads 7 0 1 3 6
check "nbdsh: the disk reads as the plain image does" same_disk nbdsh

# fio: random writes of mixed sizes, read back and verified, then smaller
# writes over part of them (partial overwrites, verified), then zeroes and
# trims over those; the same seeds on both servers.  The verify patterns
# hold each block's offset and no time stamp, so both disks get the same
# bytes.
fio_both () {
  local name=$1; shift
  both fio --name="$name" --ioengine=nbd --uri=@URI@ --iodepth=8 --randseed=42 \
    --verify=pattern --verify_fatal=1 --do_verify=1 --verify_state_save=0 "$@"
}
check "fio: random writes 512-64k, verified" \
  fio_both first --rw=randwrite --bsrange=512-64k --blockalign=512 --size=8M --offset=8M \
    --verify_pattern=%o
check "fio: 512-4k writes over them, verified" \
  fio_both second --rw=randwrite --bsrange=512-4k --blockalign=512 --size=2M --offset=9M \
    --verify_pattern=0x5aa5
check "fio: 4k writes, verified" \
  fio_both third --rw=randwrite --bs=4k --size=2M --offset=12M --verify_pattern=%o
check "nbdsh: zeroes and trims over fio's extents on both" \
  both nbdsh -u @URI@ -c '
import random
h.set_strict_mode(0)
rng = random.Random(5)
for _ in range(200):
    off = 8 * 1048576 + rng.randrange(0, 6 * 2048) * 512
    n = rng.randrange(1, 64) * 512
    (h.trim if rng.randrange(2) else h.zero)(n, off)
'
check "fio: reads of every alignment match the plain image" compare_reads 9 8 9 10 12 13
check "fio: the disk reads as the plain image does" same_disk fio

# While nbdkit serves, the mover writes the image, and a flush drains it.
check "the queue: after a flush the image holds every write" \
  eval 'nbdsh -u "nbd+unix:///?socket=$wsock" -c "h.flush()" &&
        cmp "$T/disk.img" "$T/plain.img"'
check "the log says it is the store (header flag STORE)" \
  test "$("$WTRACK" dump --json "$T/writes.wtlog" | jq -c 'select(.header) | .header.flags')" = '["DATA","STORE"]'

[ "$data" = on ] ||
  check "stage=off wrote its image as the requests came" cmp "$T/off.img" "$T/plain.img"
stop_nbdkit wt
stop_nbdkit file
if [ "$data" = off ]; then stop_nbdkit off; fi
check "at unload the log is applied: disk.img equals the plain image" \
  cmp "$T/disk.img" "$T/plain.img"
# The exit's phases, each timed in nbdkit -v's output (scripts/bench's e2e
# section reports them): the strip and its directory sync only with data=off.
phases="drain|image sync|exports close|log close|unload"
# shellcheck disable=SC2034 # read by the eval below
[ "$data" = on ] || phases="drain|image sync|exports close|log close|header|unload"
check "nbdkit -v: every phase of the exit timed (exit: PHASE took S s)" \
  eval 'test "$(grep -Ec "debug: exit: ($phases) took [0-9]+\.[0-9]{3} s\$" "$T/wt.log")" \
          = "$(tr "|" "\n" <<<"$phases" | wc -l)"'
check "the log ends with the final CLOSE (closed)" \
  test "$("$WTRACK" dump --json "$T/writes.wtlog" | jq -r 'select(.end) | .end')" = closed
check "wtrack verify is clean" "$WTRACK" verify "$T/writes.wtlog" "$T/disk.img"
if [ "$data" = on ]; then
  check "replay on base.img equals disk.img" \
    eval '"$WTRACK" replay "$T/writes.wtlog" --base "$T/base.img" --out "$T/replayed.img" &&
          cmp "$T/replayed.img" "$T/disk.img"'
  check "wtrack dump names the flag" \
    eval '"$WTRACK" dump "$T/writes.wtlog" | head -2 | grep -q "flags=DATA,STORE"'
  return
fi
check "data=off: the unload took the payloads out (header flags none)" \
  test "$("$WTRACK" dump --json "$T/writes.wtlog" | jq -c 'select(.header) | .header.flags')" = '[]'
check "data=off: no record carries DATA" \
  test "$("$WTRACK" dump --json "$T/writes.wtlog" | jq -s '[.[] | select(.seq) | select(.flags | index("DATA"))] | length')" = 0
check "data=off: every write, zero and trim is flagged APPLIED" \
  test "$("$WTRACK" dump --json "$T/writes.wtlog" | jq -s '[.[] | select(.type == "WRITE" or .type == "ZERO" or .type == "TRIM") | select(.flags | index("APPLIED") | not)] | length')" = 0
# The same writes, zeroes and trims went to both servers (the reads that
# compare disks only to this one: more connections, other conn numbers),
# and fio's requests in flight may reach a log in another order: the
# records that change the disk are compared as sets, without the queue's
# APPLIED.
records () {
  "$WTRACK" dump --json "$1" |
    jq -c 'select(.type == "WRITE" or .type == "ZERO" or .type == "TRIM")
           | {type, flags: (.flags - ["APPLIED"]), err, offset, length, hashes}' | sort
}
check "data=off: the same writes, zeroes and trims as the stage=off run's" \
  eval 'records "$T/writes.wtlog" >"$T/on.rec" && records "$T/off.wtlog" >"$T/off.rec" &&
        test -s "$T/on.rec" && cmp "$T/on.rec" "$T/off.rec"'
check "data=off: no PATH.strip left beside the log" test ! -e "$T/writes.wtlog.strip"
}

store_run on
store_run off
done_testing
