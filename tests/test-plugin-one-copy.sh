#!/bin/bash
# data=on keeps one copy of large writes (doc/formats.md, "One copy of
# large writes"; doc/design-plugin.md): the real plugin, served to nbdsh's
# Python client, writes each large whole-sector write straight into the
# image and logs it without its bytes (IN_IMAGE); a later change over
# those bytes first logs them as a SAVED record.  The client keeps its own
# model of the disk.  Checked:
# - a clean run: the image is the model, the log holds IN_IMAGE and SAVED
#   records and less than half the bytes written, wtrack verify passes,
#   and every reader (replay to every FLUSH, FUA and IN_IMAGE point,
#   crash, export) agrees with the log (check_in_image,
#   tests/lib-in-image.sh);
# - a killed run (mover paused, 20 small writes queued at the end, SIGKILL
#   after the last reply): the log
#   completed from the ring replays from base.img, with the killed image as
#   the final one, to the model; the command wtrack verify prints does too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-in-image.sh"
require_tools nbdkit nbdsh cmp jq cksum
require_built "$PLUGIN" "$WTRACK"
plan 13

sock=$T/nbd.sock
log=$T/writes.wtlog

# The client: requests one at a time, seeded; the model of the disk goes
# to MODEL.  Large writes of 1 MiB (whole sectors: IN_IMAGE), some over
# earlier ones; 4 KiB writes, some unaligned (a partial sector: merged);
# 96 KiB writes at an odd offset (not whole sectors: they keep their
# bytes); zeroes of 64 KiB; a flush every 25 requests, FUA on some.
cat >"$T/client.py" <<'PY'
import os, random, signal, sys
import nbd
uri, n, model_path, kill = sys.argv[1:5]
n = int(n)
h = nbd.NBD()
# Unaligned requests are the point of some of them.
h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)
h.connect_uri(uri)
size = h.get_size()
with open(model_path.replace(".model", ".base"), "rb") as f:
    disk = bytearray(f.read())
rng = random.Random(34)
large = 0
def request(i):
    global large
    kind = rng.random()
    flags = nbd.CMD_FLAG_FUA if i % 17 == 5 else 0
    if kind < 0.35:
        ln = 1 << 20
        off = rng.randrange((size - ln) // 4096) * 4096
        buf = bytes([i % 251 + 1]) * 4096 + os.urandom(ln - 4096)
        large += ln
    elif kind < 0.75:
        ln = 4096
        off = rng.randrange(size - ln)
        if rng.random() < 0.5:
            off = off // 4096 * 4096
        buf = os.urandom(ln)
    elif kind < 0.85:
        ln = 98304
        off = rng.randrange((size - ln) // 4096) * 4096 + 100
        buf = os.urandom(ln)
    else:
        ln = 65536
        off = rng.randrange((size - ln) // 512) * 512
        h.zero(ln, off, flags)
        disk[off:off + ln] = bytes(ln)
        return
    h.pwrite(buf, off, flags)
    disk[off:off + ln] = buf
    if i % 25 == 24:
        h.flush()
def small_tail():
    # Left in the paused queue: no large write after them drains it.
    for j in range(20):
        off = rng.randrange(size // 4096) * 4096
        buf = os.urandom(4096)
        h.pwrite(buf, off, 0)
        disk[off:off + 4096] = buf
try:
    for i in range(n):
        request(i)
    if kill:
        small_tail()
finally:
    # A client that fails must not leave the server waiting for its kill.
    if kill:
        os.kill(int(kill), signal.SIGKILL)
with open(model_path, "wb") as f:
    f.write(disk)
print(large)
PY

# one_copy_run N [KILL]: a fresh base.img (random), disk.img its copy,
# the plugin with data=on on it; N requests; nbdkit stopped, or with KILL
# its mover paused and nbdkit killed after the last reply.
one_copy_run () {
  local n=$1 kill=${2:-} pid
  rm -f "$T"/*.img "$T"/*.model "$T"/*.base "$log" "$log.ring" "$sock"
  head -c 128M /dev/urandom >"$T/base.img"
  cp "$T/base.img" "$T/disk.img"
  cp "$T/base.img" "$T/run.base"
  if [ -n "$kill" ]; then
    start_nbdkit wt "$sock" -D wtrack.mover_pause=1 "$PLUGIN" "$T/disk.img" \
      log="$log" data=on
    pid=$(cat "$T/wt.pid")
  else
    start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data=on
    pid=
  fi
  large=$(/usr/bin/python3 "$T/client.py" "nbd+unix:///?socket=$sock" "$n" \
    "$T/run.model" "$pid" 2>"$T/client.err") || diag_file "$T/client.err"
  if [ -n "$kill" ]; then
    wait "$pid" 2>/dev/null
    wait_process_gone "$pid"
    rm -f "$T/wt.pid"
  else
    stop_nbdkit wt
  fi
}

count_flag () {
  "$WTRACK" dump --json "$log" | jq -s --arg f "$1" \
    '[.[] | select(.type == $f or (.flags and (.flags | index($f))))] | length'
}

one_copy_run 160
in_image=$(count_flag IN_IMAGE)
saved=$(count_flag SAVED)
log_size=$(stat -c %s "$log")
diag "clean run: $large bytes of large writes, $in_image IN_IMAGE records, $saved SAVED, log $log_size bytes"
check "clean run: the image is the client's model of the disk" cmp "$T/disk.img" "$T/run.model"
check "clean run: large writes were logged IN_IMAGE and overwritten ones SAVED" \
  test "$in_image" -gt 20 -a "$saved" -gt 5
check "clean run: the log holds less than half the bytes of the large writes" \
  test "$log_size" -lt $((large / 2))
check "clean run: wtrack verify passes the image" "$WTRACK" verify "$log" "$T/disk.img"
check_in_image "$log" "$T/base.img" "$T/disk.img"

one_copy_run 120 kill
"$WTRACK" verify "$log" "$T/disk.img" >"$T/verify.out" 2>"$T/verify.err"
verify_status=$?
diag "killed run: wtrack verify exit $verify_status"
diag_file "$T/verify.err" 2
check "killed run: wtrack verify refuses the image as it was left (exit 2)" \
  test "$verify_status" -eq 2
check "killed run: replay from base.img with the killed image as the final one is the model" \
  eval '"$WTRACK" replay "$log" --base "$T/base.img" --final-image "$T/disk.img" \
    --out "$T/replayed.img" && cmp "$T/replayed.img" "$T/run.model"'
check "killed run: the command wtrack verify printed gives the model" \
  eval 'args=$(sed -n "s/.*run with: wtrack replay \(.*\), then give it.*/\1/p" "$T/verify.err");
    test -n "$args" && eval "\"\$WTRACK\" replay $args" >/dev/null 2>&1 &&
    cmp "$T/disk.img.replayed" "$T/run.model"'
check "killed run: IN_IMAGE records were among those completed from the ring" \
  test "$(count_flag IN_IMAGE)" -gt 0
done_testing
