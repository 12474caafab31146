#!/bin/bash
# The log as the store (stage=on, the default), with data=on and with
# data=off alike, nbdkit killed with SIGKILL in the middle of parallel
# writes and zeroes: the image holds part of the run (the mover's; with
# data=off every write, the requests write them, and the zeroes the mover
# reached), `wtrack check` and `wtrack verify` say how to get the disk
# after the run when the image lacks some of it,
# and `wtrack replay` of the log gives every write and zero the client saw
# acknowledged (with data=off too: the ring's records come back into the
# log with their bytes).  With stage=off (and data=off) the image itself holds
# every acknowledged write and zero.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh cmp jq
require_built "$PLUGIN" "$WTRACK"
plan 20

# acked_in IMAGE [writes]: every acknowledged write and zero (with
# "writes": every write) is in IMAGE.
acked_in () {
  /usr/bin/python3 -c '
import sys
img = open(sys.argv[1], "rb")
bad = 0
for line in open(sys.argv[2]):
    n = int(line)
    if sys.argv[3] == "writes" and n % 8 == 7:
        continue
    img.seek(n * 4096)
    want = bytes(4096) if n % 8 == 7 else n.to_bytes(4, "little") * 1024
    if img.read(4096) != want:
        bad += 1
print("# %d acknowledged requests missing from %s" % (bad, sys.argv[1]), file=sys.stderr)
sys.exit(bad != 0)
' "$1" "$T/acked.txt" "${2:-all}"
}

# kill_run DATA STAGE: the whole story with data=DATA stage=STAGE.
kill_run () {
local data=$1 stage=$2
diag "data=$data stage=$stage"
sock=$T/nbd.sock
log=$T/writes.wtlog
rm -f "$T"/*.img "$log" "$T/acked.txt" "$sock"
head -c 32M /dev/urandom >"$T/base.img"
cp "$T/base.img" "$T/disk.img"
start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data="$data" stage="$stage"

# Two connections, 16 requests in flight each, every request to its own
# 4 KiB slot: a write with content derived from its number, or (one in 8)
# a zero.  A slot's number goes to acked.txt only once its reply arrived.
cat >"$T/writer.py" <<'PY'
import sys
import nbd
acked = open(sys.argv[1], "w", buffering=1)
handles = [nbd.NBD(), nbd.NBD()]
for hh in handles:
    hh.connect_uri(sys.argv[2])
def done(n, err):
    if err.value == 0:
        acked.write("%d\n" % n)
    return 0
slots = 32 * 1024 * 1024 // 4096
n = 0
try:
    while n < slots:
        for hh in handles:
            while hh.aio_in_flight() < 16 and n < slots:
                cb = lambda err, n=n: done(n, err)
                if n % 8 == 7:
                    hh.aio_zero(4096, n * 4096, completion=cb)
                else:
                    hh.aio_pwrite(n.to_bytes(4, "little") * 1024, n * 4096,
                                  completion=cb)
                n += 1
            hh.poll(0)
        handles[0].poll(1)
except nbd.Error as e:
    print("writer stopped: %s" % e, file=sys.stderr)
PY
/usr/bin/python3 "$T/writer.py" "$T/acked.txt" "nbd+unix:///?socket=$sock" \
  2>"$T/writer.err" &
writer=$!
on_exit kill_pid "$writer"
kill_nbdkit_after_acks wt "$T/acked.txt" 1500 "$writer"
nacked=$(wc -l <"$T/acked.txt")
diag "$nacked requests acknowledged before SIGKILL"
check "the client saw requests acknowledged before the kill" test "$nacked" -ge 1500
check "the client saw the server die before finishing" test "$nacked" -lt 8192

if [ "$stage" = off ]; then
  check "stage=off: every acknowledged write and zero is in the image" acked_in "$T/disk.img"
  check "stage=off: the log holds no bytes (header flags none)" \
    test "$("$WTRACK" dump --json "$log" 2>/dev/null | jq -c 'select(.header) | .header.flags')" = '[]'
  return
fi
if [ "$data" = on ]; then
  # The mover had written a prefix onto the image; the log has every
  # record whole (replay from the image applies that prefix again).
  check "data=on: no record is flagged APPLIED (the log holds every byte)" \
    test "$("$WTRACK" dump --json "$log" | jq -s '[.[] | select(.flags and (.flags | index("APPLIED")))] | length')" -eq 0
else
  # The queue: the mover had applied a prefix onto the image; its records
  # are in the log flagged APPLIED, the ring's rest (read back by the
  # reader) with their bytes.
  check "the queue: the log holds the moved records, flagged APPLIED" \
    test "$("$WTRACK" dump --json "$log" | jq -s '[.[] | select(.flags and (.flags | index("APPLIED")))] | length')" -gt 0
fi
"$WTRACK" verify "$log" "$T/disk.img" >/dev/null 2>"$T/verify.err"
verify_status=$?
diag_file "$T/verify.err" 3
"$WTRACK" check --no-manifest --image "$T/disk.img" --log "$log" >/dev/null 2>"$T/check.err"
# shellcheck disable=SC2034 # read by the evals below
check_status=$?
if [ "$data" = on ]; then
  check "wtrack verify refuses the unapplied image (exit 2)" test "$verify_status" -eq 2
  check "and says to replay the log" grep -q "wtrack replay" "$T/verify.err"
  check "wtrack check says the same (exit 2)" \
    eval 'test $check_status -eq 2 && grep -q "wtrack replay" "$T/check.err"'
else
  # Every write went into the image in its request; the queue held only
  # zeroes, which the mover may not have reached.
  check "the queue: every acknowledged write is in the image itself" \
    acked_in "$T/disk.img" writes
  check "wtrack verify passes the image, or refuses it and says to replay the log" \
    eval 'test $verify_status -eq 0 ||
      { test $verify_status -eq 2 && grep -q "wtrack replay" "$T/verify.err"; }'
  check "wtrack check says the same as verify" \
    eval 'test $check_status -eq $verify_status &&
      { test $check_status -eq 0 || grep -q "wtrack replay" "$T/check.err"; }'
fi

# disk.img serves as the base: it is the disk at the start.
check "wtrack replay applies the log up to its end (exit 0 unclosed, 2 torn)" \
  replay_killed_log "$log" "$T/disk.img" "$T/replayed.img"
check "every acknowledged write and zero is in the replayed image" \
  acked_in "$T/replayed.img"
}

kill_run on on
kill_run off on
kill_run off off
done_testing
