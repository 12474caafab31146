#!/bin/bash
# fio's nbd engine against the plugin: 4 jobs of random writes at queue depth
# 16, each on its own connection, reading back with crc32c verification.
# Requests run in parallel in nbdkit, so this tests the ordering of the log:
# the log replays to the image, every hash matches, seq has no gaps.
# A second run makes the jobs' ranges overlap (verification off): writes to
# the same sectors race, and the log must still order them as the image did.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit fio jq cmp
require_built "$PLUGIN" "$WTRACK"
plan 15


# run_fio NAME FIO-OPTIONS...: fresh images and log, one fio run.
run_fio () {
  local name=$1; shift
  local sock=$T/$name.sock
  head -c 64M /dev/urandom >"$T/base.img"
  cp "$T/base.img" "$T/disk.img"
  start_nbdkit "$name" "$sock" "$PLUGIN" "$T/disk.img" log="$T/$name.wtlog" data=on
  (cd "$T" && fio --name="$name" --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --numjobs=4 --iodepth=16 \
    --group_reporting "$@" >"$T/$name.fio" 2>&1)
  local status=$?
  stop_nbdkit "$name"
  [ $status -eq 0 ] || cat "$T/$name.fio" >&2
  return $status
}

# check_log NAME: the log of that run against disk.img.
check_log () {
  local name=$1 log=$T/$1.wtlog
  "$WTRACK" dump --json "$log" | jq -c 'select(.seq)' >"$T/$name.json"
  check "$name: seq has no gaps" \
    test "$(jq -s '[.[].seq] == [range(1; length + 1)]' "$T/$name.json")" = true
  check "$name: replay on base.img equals disk.img" \
    eval '"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/replayed.img" &&
          cmp "$T/replayed.img" "$T/disk.img"'
  check "$name: wtrack verify is clean" "$WTRACK" verify "$log" "$T/disk.img"
}

check "disjoint: fio random writes with crc32c verify" \
  run_fio disjoint --rw=randwrite --bs=4k --size=16M --offset_increment=16M \
    --verify=crc32c --verify_fatal=1 --do_verify=1
check "disjoint: fio used 4 connections" \
  test "$("$WTRACK" dump --json "$T/disjoint.wtlog" | jq -s '[.[] | select(.type == "OPEN" and .offset == 0)] | length')" -ge 4
check "disjoint: every 4 KiB write of the jobs is logged" \
  test "$("$WTRACK" dump --json "$T/disjoint.wtlog" | jq -s '[.[] | select(.type == "WRITE" and .length == 4096)] | length')" -ge 16384
check_log disjoint

# Overlapping jobs and mixed sizes, some unaligned to 4 KiB: races on shared
# sectors, partial-page read-modify-write in the plugin.
check "overlap: fio random writes racing on the same sectors" \
  run_fio overlap --rw=randwrite --bsrange=512-64k --blockalign=512 --size=8M \
    --io_size=24M --randrepeat=0
check_log overlap

check "flush: random writes with a flush every 32" \
  run_fio flush --rw=randwrite --bs=4k --size=8M --io_size=8M --fsync=32 \
    --randrepeat=0
check_log flush
check "flush: the log has FLUSH records" \
  test "$(jq -s '[.[] | select(.type == "FLUSH")] | length' "$T/flush.json")" -gt 0
done_testing
