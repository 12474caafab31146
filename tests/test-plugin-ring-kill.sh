#!/bin/bash
# data=on, nbdkit killed with SIGKILL while small writes (which go through
# the ring beside the log) and large ones (64 KiB and more, written straight
# into the log) are in flight together: the kill leaves the ring, the first
# `wtrack` command that reads the log completes it from the ring and removes
# it, and `wtrack replay` then gives every write the client saw
# acknowledged, large and small.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh cmp jq
require_built "$PLUGIN" "$WTRACK"
plan 10

sock=$T/nbd.sock
log=$T/writes.wtlog
truncate -s 64M "$T/base.img"
cp "$T/base.img" "$T/disk.img"
start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data=on

# A second nbdkit given the same log refuses to start (the ring is
# locked), and leaves the log alone: the replay below needs all of it.
# (Under ASan, nbdkit hangs in exit() after such an error, see tests.mk:
# the timeout ends it, and its message is what counts.)
cp "$T/base.img" "$T/other.img"
timeout 10 nbdkit -f -U "$T/other.sock" "$PLUGIN" "$T/other.img" log="$log" \
  data=on 2>"$T/other.err"
other_status=$?
diag "second nbdkit: exit $other_status"

# Two connections, 16 requests in flight each.  Request n writes its own
# 128 KiB slot: 96 KiB (a record too large for the ring) when n is a
# multiple of 5, else 4 KiB; content derived from n.  n goes to acked.txt
# only once its reply arrived.
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
slots = 64 * 1024 * 1024 // 131072
n = 0
try:
    while n < slots:
        for hh in handles:
            while hh.aio_in_flight() < 16 and n < slots:
                size = 98304 if n % 5 == 0 else 4096
                data = n.to_bytes(4, "little") * (size // 4)
                hh.aio_pwrite(data, n * 131072,
                              completion=lambda err, n=n: done(n, err))
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
kill_nbdkit_after_acks wt "$T/acked.txt" 150 "$writer"
nacked=$(wc -l <"$T/acked.txt")
diag "$nacked writes acknowledged before SIGKILL"
check "the client saw writes acknowledged before the kill" test "$nacked" -ge 150
check "the client saw the server die before finishing" test "$nacked" -lt 512
check "the killed plugin left its ring beside the log" test -f "$log.ring"
diag_file "$T/other.err" 2
check "a second nbdkit on the same log failed to start, saying why" \
  eval 'test "$other_status" -ne 0 && grep -q "another nbdkit" "$T/other.err"'

# What the log file holds without the ring, read from a copy of it alone.
cp "$log" "$T/alone.wtlog"
alone=$("$WTRACK" dump --json "$T/alone.wtlog" 2>/dev/null | jq -s '[.[] | select(.seq)] | length')
"$WTRACK" dump --json "$log" >"$T/dump.json" 2>"$T/dump.err"
check "wtrack dump reads the killed log (exit 0, unclosed)" \
  test "$(jq -r 'select(.end) | .end' "$T/dump.json")" = unclosed
whole=$(jq -s '[.[] | select(.seq)] | length' "$T/dump.json")
diag "records: $alone in the log file alone, $whole once completed from the ring"
check "reading it completed the log and removed the ring" \
  eval 'test "$whole" -ge "$alone" && test ! -e "$log.ring"'
check "seq has no gaps up to the end" \
  test "$(jq -s '[.[] | select(.seq) | .seq] | . == [range(1; length + 1)]' "$T/dump.json")" = true

check "wtrack replay applies the log up to its end (exit 0 unclosed, 2 torn)" \
  replay_killed_log "$log" "$T/disk.img" "$T/replayed.img"
check "every acknowledged write, large and small, is in the replayed image" \
  /usr/bin/python3 -c '
import sys
img = open(sys.argv[1], "rb")
bad = 0
for line in open(sys.argv[2]):
    n = int(line)
    size = 98304 if n % 5 == 0 else 4096
    img.seek(n * 131072)
    if img.read(size) != n.to_bytes(4, "little") * (size // 4):
        bad += 1
print("# %d acknowledged writes missing from the replay" % bad, file=sys.stderr)
sys.exit(bad != 0)
' "$T/replayed.img" "$T/acked.txt"
# A second reader finds nothing more to do and reads the same log.
"$WTRACK" dump --json "$log" >"$T/dump2.json" 2>/dev/null
check "a second read gives the same records" cmp "$T/dump.json" "$T/dump2.json"
done_testing
