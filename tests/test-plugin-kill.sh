#!/bin/bash
# nbdkit killed with SIGKILL in the middle of parallel writes: the log reads
# up to its last complete record, and every write the client saw
# acknowledged is in it, with its data.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh jq comm
require_built "$PLUGIN" "$WTRACK"
plan 8

sock=$T/nbd.sock
log=$T/writes.wtlog
truncate -s 64M "$T/base.img"
cp "$T/base.img" "$T/disk.img"
start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data=on

# Two connections, 16 writes in flight each, every write to its own 4 KiB
# slot with content derived from its number; a write's number goes to
# acked.txt (flushed at once) only when its reply has arrived.
cat >"$T/writer.py" <<'EOF'
import sys
import nbd
acked = open(sys.argv[1], "w", buffering=1)
uri = sys.argv[2]
handles = [nbd.NBD(), nbd.NBD()]
for hh in handles:
    hh.connect_uri(uri)
def content(n):
    return (n.to_bytes(4, "little") * 1024)
def done(n, err):
    if err.value == 0:
        acked.write("%d\n" % n)
    return 0
slots = 64 * 1024 * 1024 // 4096
n = 0
try:
    while n < slots:
        for i, hh in enumerate(handles):
            while hh.aio_in_flight() < 16 and n < slots:
                hh.aio_pwrite(content(n), n * 4096,
                              completion=lambda err, n=n: done(n, err))
                n += 1
            hh.poll(0)
        handles[0].poll(1)
except nbd.Error as e:
    print("writer stopped: %s" % e, file=sys.stderr)
EOF
# Debian's python3, which has the nbd module (see nbdsh in lib.sh).
/usr/bin/python3 "$T/writer.py" "$T/acked.txt" "nbd+unix:///?socket=$sock" \
  2>"$T/writer.err" &
writer=$!
on_exit kill_pid "$writer"
# Kill once a good number of writes were acknowledged, while more are queued.
kill_nbdkit_after_acks wt "$T/acked.txt" 2000 "$writer"
nacked=$(wc -l <"$T/acked.txt")
diag "$nacked writes acknowledged before SIGKILL"
check "the client saw writes acknowledged before the kill" test "$nacked" -ge 2000
check "the client saw the server die before finishing" \
  test "$nacked" -lt $((64 * 1024 * 1024 / 4096))

"$WTRACK" dump --json "$log" >"$T/dump.json" 2>"$T/dump.err"
dump_status=$?
end=$(jq -r 'select(.end) | .end' "$T/dump.json")
diag "dump: exit $dump_status, end: $end"
check "the log is not marked closed" test "$end" = torn -o "$end" = unclosed
check "wtrack dump says so (exit 0 unclosed, 2 torn)" \
  test "$end/$dump_status" = unclosed/0 -o "$end/$dump_status" = torn/2
jq -c 'select(.seq)' "$T/dump.json" >"$T/records.json"
check "seq has no gaps up to the end" \
  test "$(jq -s '[.[].seq] == [range(1; length + 1)]' "$T/records.json")" = true
jq -r 'select(.type == "WRITE") | .offset / 4096' "$T/records.json" | sort -n >"$T/logged.txt"
sort -n "$T/acked.txt" >"$T/acked.sorted"
check "every acknowledged write has its WRITE record" \
  test -z "$(comm -23 "$T/acked.sorted" "$T/logged.txt")"

# The replayed log holds every acknowledged write's content.
check "wtrack replay applies the log up to its end (exit 0 unclosed, 2 torn)" \
  replay_killed_log "$log" "$T/base.img" "$T/replayed.img"
check "every acknowledged write's content is in the replayed log" \
  /usr/bin/python3 -c '
import sys
img = open(sys.argv[1], "rb")
bad = 0
for line in open(sys.argv[2]):
    n = int(line)
    img.seek(n * 4096)
    if img.read(4096) != n.to_bytes(4, "little") * 1024:
        bad += 1
print("# %d acknowledged writes missing from the replay" % bad, file=sys.stderr)
sys.exit(bad != 0)
' "$T/replayed.img" "$T/acked.txt"
done_testing
