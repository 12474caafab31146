#!/bin/bash
# wtrack replay --out a block device (a loop device): the base's holes and
# the log's zeroes are written as zeroes over whatever the device held.
. "$(dirname "$0")/lib.sh"
require_tools losetup cmp truncate
require_built "$WTRACK" "$TOP/tests/unit/gen-wtlog"
[ "$(id -u)" = 0 ] || skip_all "loop devices need root"
plan 5

"$TOP/tests/unit/gen-wtlog" "$T/gen.wtlog" --disk-size 16M --bytes 24M \
  --write-size 64K --seed 3 --final "$T/final.img"
truncate -s 16M "$T/zero.img"
# The device is larger than the disk and full of noise.
head -c 20M /dev/urandom >"$T/backing.img"
cp "$T/backing.img" "$T/noise.img"
dev=$(losetup -f --show "$T/backing.img") || skip_all "no loop device"
on_exit losetup -d "$dev"

check "replay onto a loop device" \
  "$WTRACK" replay "$T/gen.wtlog" --base "$T/zero.img" --out "$dev"
check "... leaves the disk's bytes on it, noise gone" cmp -n 16M "$dev" "$T/final.img"
check_fails "(the noise was there before)" cmp -s -n 16M "$T/noise.img" "$T/final.img"
check "... and the rest of the device untouched" \
  cmp -i 16M:16M "$dev" "$T/noise.img"
truncate -s 8M "$T/small.img"
check_fails "a base smaller than the log's disk is refused" \
  "$WTRACK" replay "$T/gen.wtlog" --base "$T/small.img" --out "$dev"
done_testing
