#!/bin/bash
# The plugin's largest write: it advertises 32 MiB as the maximum block
# size, and nbdkit passes writes of up to 64 MiB anyway.  In the queue
# (stage=on, data=off, the default) every record goes through the 64 MiB
# ring, the channel's with their bytes, so a 64 MiB write's record could
# never find room: the request waited forever.  A write past the maximum is
# refused with EINVAL and logged FAILED, on the disk and on the channel, in
# every mode; one of exactly 32 MiB goes through.  A hang fails by timeout.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh timeout cmp
require_built "$PLUGIN" "$WTRACK"
plan 9

sock=$T/nbd.sock

# write EXPORT MIB BYTE: nbdsh writes MIB MiB of BYTE at 0 (libnbd's own
# check of the server's maximum is off); prints "ok" or "EINVAL".  Debian's
# python3 has the nbd module (lib.sh's nbdsh), under a timeout.
write () {
  timeout 60 env PATH="/usr/bin:$PATH" nbdsh -u "nbd+unix:///$1?socket=$sock" -c "
h.set_strict_mode(0)
try:
    h.pwrite(bytes([$3]) * ($2 << 20), 0)
    print('ok')
except nbd.Error as e:
    print('EINVAL' if e.errno == 'EINVAL' else 'error %s' % e.errno)
"
}

run () {
  local mode=$1; shift
  rm -f "$T/w.wtlog" "$T/w.wtlog.ring" "$sock"
  truncate -s 0 "$T/disk.img" "$T/chan.img"
  truncate -s 64M "$T/disk.img" "$T/chan.img"
  start_nbdkit "wt-$mode" "$sock" "$PLUGIN" "$T/disk.img" log="$T/w.wtlog" \
    channel="$T/chan.img" "$@" || bail_out
  big_chan=$(write channel 64 1)
  big_disk=$(write "" 48 2)
  max_chan=$(write channel 32 3)
  # A request stuck for room keeps nbdkit from exiting: the test fails
  # instead of hanging.
  if [ -z "$big_chan" ] || [ -z "$big_disk" ] || [ -z "$max_chan" ]; then
    kill -9 "$(cat "$T/wt-$mode.pid")"
  fi
  stop_nbdkit "wt-$mode"
  failed=$("$WTRACK" dump "$T/w.wtlog" | awk '$5 == "FAILED" && / err=EINVAL/' | wc -l)
  "$WTRACK" verify "$T/w.wtlog" "$T/disk.img" >"$T/verify-$mode.out" 2>&1
  verified=$?
}

run default
check "default: a 64 MiB channel write is refused with EINVAL (no hang)" \
  test "$big_chan" = EINVAL
check "default: a 48 MiB disk write is refused with EINVAL" test "$big_disk" = EINVAL
check "default: a 32 MiB channel write goes through" test "$max_chan" = ok
check "default: both refusals are logged FAILED" test "$failed" = 2
check "default: the channel holds the 32 MiB write" \
  cmp -n $((32 << 20)) "$T/chan.img" <(head -c $((32 << 20)) /dev/zero | tr '\0' '\3')
check "default: the log is whole, and wtrack verify passes the image" test "$verified" = 0

run data-on data=on
check "data=on: the 64 MiB and 48 MiB writes are refused, the 32 MiB one goes" \
  test "$big_chan $big_disk $max_chan" = "EINVAL EINVAL ok"
check "data=on: both refusals are logged FAILED" test "$failed" = 2
check "data=on: the log is whole, and wtrack verify passes the image" test "$verified" = 0
done_testing
