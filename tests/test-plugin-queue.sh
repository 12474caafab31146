#!/bin/bash
# The queue (stage=on with data=off, the default): the mover applies each
# record onto the image while nbdkit serves, and the log gets the records
# without their bytes.  With the mover paused (nbdkit -D
# wtrack.mover_pause=1) only what the client asks moves the queue:
# - a FLUSH, and a write with FUA, return only once the image and the log
#   hold everything acknowledged: nbdkit killed with SIGKILL right after
#   one, the image alone holds every write (it equals nbdkit file's image
#   fed the same requests) and `wtrack verify` passes it;
# - a full queue (no flush): with data=off every write goes onto the image
#   in its request (after the zeroes queued before it), so a SIGKILL leaves
#   the queue's last zeroes in the ring; `wtrack verify` refuses the image
#   and prints a `wtrack replay` command, which gives the disk;
# - past the ring's size the requests move the queue themselves, and large
#   writes (written onto the image by their request, after the queue
#   before them) come between: the printed command still gives the disk;
# - with data=on the mover writes the image too (the log keeps every
#   record whole): a flush, then SIGKILL, leaves the image whole; a full
#   queue killed replays to the disk.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh cmp jq
require_built "$PLUGIN" "$WTRACK"
plan 18

sock=$T/nbd.sock
log=$T/writes.wtlog

# The client: nbdsh's Python, requests one at a time (each acknowledged
# before the next).  MODE flush|fua|none says how the run ends; KILL, a
# pid or empty, is killed with SIGKILL right after the last reply.  Writes
# of BS bytes at random BS-aligned offsets, one in 10 a zero, one in 50
# (with BIG) a 96 KiB write; seeded, so every server gets the same ones.
cat >"$T/client.py" <<'PY'
import os, random, signal, sys
import nbd
uri, mode, n, bs, big, kill = sys.argv[1:7]
n, bs, big = int(n), int(bs), big == "big"
h = nbd.NBD()
h.connect_uri(uri)
size = h.get_size()
rng = random.Random(34)
for i in range(n):
    off = rng.randrange(size // bs) * bs
    last = i == n - 1
    flags = nbd.CMD_FLAG_FUA if last and mode == "fua" else 0
    if big and i % 50 == 25:
        off = rng.randrange((size - 98304) // 4096) * 4096
        h.pwrite(bytes([i % 251 + 1]) * 98304, off, flags)
    elif i % 10 == 9:
        h.zero(bs, off, flags)
    else:
        h.pwrite(i.to_bytes(4, "little") * (bs // 4), off, flags)
if mode == "flush":
    h.flush()
if kill:
    os.kill(int(kill), signal.SIGKILL)
PY

# queue_run NAME MODE N BS BIG SIZE [DATA]: the client against nbdkit file
# on plain.img and against the plugin (data=DATA, default off), mover
# paused, on disk.img, killed after the last reply.
queue_run () {
  local name=$1 mode=$2 n=$3 bs=$4 big=$5 size=$6 data=${7:-off}
  diag "$name: $n writes of $bs bytes ($big), then $mode and SIGKILL"
  rm -f "$T"/*.img "$log" "$log.ring" "$T"/*.sock
  head -c "$size" /dev/urandom >"$T/base.img"
  cp "$T/base.img" "$T/disk.img"
  cp "$T/base.img" "$T/plain.img"
  start_nbdkit file "$T/file.sock" file "$T/plain.img"
  /usr/bin/python3 "$T/client.py" "nbd+unix:///?socket=$T/file.sock" "$mode" "$n" \
    "$bs" "$big" ""
  stop_nbdkit file
  start_nbdkit wt "$sock" -D wtrack.mover_pause=1 "$PLUGIN" "$T/disk.img" log="$log" \
    data="$data"
  local pid
  pid=$(cat "$T/wt.pid")
  /usr/bin/python3 "$T/client.py" "nbd+unix:///?socket=$sock" "$mode" "$n" "$bs" "$big" \
    "$pid" 2>"$T/client.err"
  wait "$pid" 2>/dev/null
  wait_process_gone "$pid"
  rm -f "$T/wt.pid"
  "$WTRACK" verify "$log" "$T/disk.img" >"$T/verify.out" 2>"$T/verify.err"
  verify_status=$?
  diag "wtrack verify: exit $verify_status"
  diag_file "$T/verify.err" 2
}

# The command wtrack verify printed, run: the disk after the run.
printed_replay () {
  local args
  args=$(sed -n 's/.*run with: wtrack replay \(.*\), then give it.*/\1/p' "$T/verify.err")
  [ -n "$args" ] || return 1
  eval "\"\$WTRACK\" replay $args" >/dev/null 2>&1
  cmp "$T/disk.img.replayed" "$T/plain.img"
}

unapplied_zeroes () {
  "$WTRACK" dump --json "$log" |
    jq -s '[.[] | select(.type == "ZERO" and (.flags | index("APPLIED") | not))] | length'
}

data_records () {
  "$WTRACK" dump --json "$log" | jq -s '[.[] | select(.flags and (.flags | index("DATA")))] | length'
}

queue_run flush flush 3000 4096 big 32M
check "flush, SIGKILL: the image alone holds every write" cmp "$T/disk.img" "$T/plain.img"
check "flush, SIGKILL: wtrack verify passes the image (exit 0)" test "$verify_status" -eq 0
check "flush, SIGKILL: no record needed its bytes from the ring" test "$(data_records)" -eq 0
# The log's header still says DATA, but its records are APPLIED: crash
# (which starts from base.img) refuses them rather than skip them.
check "flush, SIGKILL: wtrack crash refuses the APPLIED records (base.img lacks them)" \
  eval '"$WTRACK" crash "$T" --check "true {}" >/dev/null 2>"$T/crash.err";
        test $? -eq 2 && grep -Eq "seq [0-9]+: (WRITE has no data|.*flagged APPLIED)" "$T/crash.err"'

queue_run fua fua 3000 4096 small 32M
check "FUA, SIGKILL: the image alone holds every write" cmp "$T/disk.img" "$T/plain.img"
check "FUA, SIGKILL: wtrack verify passes the image (exit 0)" test "$verify_status" -eq 0

queue_run full none 3000 4096 small 32M
# The requests wrote every write onto the image (each after the zeroes
# queued before it); the run's last request, a zero, stayed queued.
check "full queue, SIGKILL: the image differs from the disk only by the queued last zero" \
  eval 'n=$(cmp -l "$T/disk.img" "$T/plain.img" | wc -l); test "$n" -gt 0 -a "$n" -le 4096'

check "full queue, SIGKILL: wtrack verify refuses the image (exit 2)" \
  test "$verify_status" -eq 2
check "full queue: the printed command bases on the image itself" \
  grep -q -- "--base '$T/disk.img'" "$T/verify.err"
check "full queue: the queued zero came back from the ring, not APPLIED" \
  test "$(unapplied_zeroes)" -gt 0
check "full queue: the printed wtrack replay gives the disk" printed_replay

# 2600 writes of 32 KiB (records of about 33 KiB): past the 64 MiB ring.
queue_run overflow none 2600 32768 big 128M
check "overflow, SIGKILL: the requests moved part of the queue onto the image" \
  eval '! cmp -s "$T/disk.img" "$T/base.img"'
check "overflow, SIGKILL: wtrack verify refuses the image (exit 2)" \
  test "$verify_status" -eq 2
check "overflow: the printed wtrack replay gives the disk" printed_replay

queue_run data-flush flush 2000 4096 big 32M on
check "data=on, flush, SIGKILL: the image alone holds every write" \
  cmp "$T/disk.img" "$T/plain.img"
check "data=on, flush, SIGKILL: wtrack verify passes the image (exit 0)" \
  test "$verify_status" -eq 0

queue_run data-full none 2000 4096 big 32M on
check "data=on, full queue, SIGKILL: wtrack verify refuses the image (exit 2)" \
  test "$verify_status" -eq 2
check "data=on, full queue: the printed wtrack replay gives the disk" printed_replay
done_testing
