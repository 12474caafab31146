#!/bin/bash
# wtrack replay on a log the plugin recorded from qemu-io and nbdsh: the whole
# log gives disk.img, and every --to-* point gives the disk as it was when
# the clients had done that much (snapshots of the disk read through NBD
# then).
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io qemu-img jq cmp
require_built "$PLUGIN" "$WTRACK" "$GUEST"
plan 18

sock=$T/nbd.sock
log=$T/writes.wtlog
head -c 16M /dev/urandom >"$T/base.img"
cp "$T/base.img" "$T/disk.img"
start_nbdkit wt "$sock" "$PLUGIN" "$T/disk.img" log="$log" data=on \
  channel="$T/channel.bin" channel-size=1M
disk="nbd+unix:///?socket=$sock"

# The log so far: its last seq, how many FLUSH records, the last t_end.
log_facts () {
  "$WTRACK" dump --json "$log" 2>/dev/null | jq -s -r '
    [.[] | select(.seq)] |
    "\(.[-1].seq) \([.[] | select(.type == "FLUSH")] | length) \(.[-1].t_end)"'
}
# The disk as the clients see it now. With data=on the log is the store and
# disk.img is written only when nbdkit exits, so the snapshot is read
# through NBD, not copied from the image.
snapshot () {
  qemu-img convert -f raw -O raw "$disk" "$1"
}
# A MARK, sent as the guest sends it: wtrack-guest appends it to a channel
# file, and its blocks go to the channel export at the same offset.
send_mark () {
  local before after
  before=$(stat -c %s "$T/guest-channel" 2>/dev/null || echo 0)
  "$GUEST" mark --channel-file "$T/guest-channel" "$1" || return 1
  after=$(stat -c %s "$T/guest-channel")
  nbdsh -u "nbd+unix:///channel?socket=$sock" -c "
with open('$T/guest-channel', 'rb') as f:
    f.seek($before)
    h.pwrite(f.read($after - $before), $before)
"
}

qemu-io -f raw "$disk" -c 'write -P 0x11 0 64k' -c 'write -P 0x22 1000 3000' \
  -c 'write -z 128k 64k' -c 'discard 512k 128k' -c 'flush' >/dev/null
nbdsh -u "$disk" -c '
h.set_strict_mode(0)
h.pwrite(b"\x66" * 100, 3 * 1048576 + 10)
h.zero(700, 3 * 1048576 + 20000)
h.flush()
'
snapshot "$T/snap-a.img"
read -r seq_a flushes_a tend_a < <(log_facts)
send_mark "after a"
qemu-io -f raw "$disk" -c 'write -P 0x33 1M 1M' -c 'write -f -P 0x44 4M 4k' \
  -c 'write -P 0x55 5M 512' >/dev/null
snapshot "$T/snap-b.img"
read -r seq_b _ _ < <(log_facts)
send_mark "after b"
qemu-io -f raw "$disk" -c 'write -P 0x66 6M 2M' -c 'discard 1M 512k' -c 'flush' >/dev/null
stop_nbdkit wt
diag "a: seq $seq_a, $flushes_a flushes, t_end $tend_a ns; b: seq $seq_b"

check "the whole log replays to disk.img" \
  "$WTRACK" replay "$log" --base "$T/base.img" --out "$T/all.img"
check "... byte for byte" cmp "$T/all.img" "$T/disk.img"

"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/seq.img" --to-seq "$seq_a"
check "--to-seq gives the disk at that seq" cmp "$T/seq.img" "$T/snap-a.img"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/flush.img" --to-flush "$flushes_a"
check "--to-flush K gives the disk after the K-th flush" cmp "$T/flush.img" "$T/snap-a.img"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/time.img" --to-time "${tend_a}ns"
check "--to-time gives the disk at that time" cmp "$T/time.img" "$T/snap-a.img"
# The boundary, record by record: the last data record before point a (seq
# w, ending at tw) is applied by --to-time tw, and not by --to-time tw-1ns.
read -r w tw < <("$WTRACK" dump --json "$log" | jq -s -r --argjson a "$seq_a" '
  [.[] | select(.seq and .seq <= $a and (.type == "WRITE" or .type == "ZERO" or .type == "TRIM"))][-1] |
  "\(.seq) \(.t_end)"')
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/seq-w.img" --to-seq "$w"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/seq-w1.img" --to-seq "$((w - 1))"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/time-w.img" --to-time "${tw}ns"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/time-w1.img" --to-time "$((tw - 1))ns"
check "--to-time T applies the record ending exactly at T (seq $w)" \
  cmp "$T/time-w.img" "$T/seq-w.img"
check "--to-time T-1ns stops before it (and that record changed the disk)" \
  bash -c "cmp '$T/time-w1.img' '$T/seq-w1.img' && ! cmp -s '$T/seq-w1.img' '$T/seq-w.img'"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/mark-a.img" \
  --channel "$T/channel.bin" --to-mark "after a"
check "--to-mark gives the disk when the guest sent the MARK" \
  cmp "$T/mark-a.img" "$T/snap-a.img"
"$WTRACK" replay "$log" --base "$T/base.img" --out "$T/mark-b.img" \
  --channel "$T/channel.bin" --to-mark "after b"
check "--to-mark of a later MARK gives the later disk" \
  cmp "$T/mark-b.img" "$T/snap-b.img"
check_fails "the two points differ (the test can tell them apart)" \
  cmp -s "$T/snap-a.img" "$T/snap-b.img"

"$WTRACK" replay --list-points --channel "$T/channel.bin" "$log" >"$T/points" 2>&1
sed 's/^/#   /' "$T/points" >&2
check "--list-points names both MARKs with their --to-mark" \
  test "$(grep -c -- "MARK  --to-mark 'after [ab]'" "$T/points")" = 2
check "--list-points names the FUA write" \
  grep -q 'FUA .*WRITE 4194304+4096' "$T/points"
check "--list-points numbers the flushes as --to-flush counts them" \
  grep -q -- "FLUSH --to-flush $flushes_a " "$T/points"
check "--list-points is in seq order" \
  bash -c "grep -v '^#' '$T/points' | awk '{print \$1}' | sort -n -c"

out=$("$WTRACK" replay "$log" --base "$T/base.img" --out "$T/x.img" --to-seq 99999 2>&1)
check "--to-seq past the end is an error (exit 2) that says so" \
  test $? -eq 2 -a -n "$(echo "$out" | grep 'ends at seq')"
out=$("$WTRACK" replay "$log" --base "$T/base.img" --out "$T/x.img" \
        --channel "$T/channel.bin" --to-mark nosuch 2>&1)
check "--to-mark of a MARK that was never sent is an error naming it" \
  test $? -eq 2 -a -n "$(echo "$out" | grep 'no MARK "nosuch"')"
out=$("$WTRACK" replay "$log" --base "$T/base.img" --out "$T/base.img" 2>&1)
check "--out equal to --base is refused" \
  test $? -eq 2 -a -n "$(echo "$out" | grep 'same file')"
check "... and the base is untouched" \
  bash -c "'$WTRACK' replay '$log' --base '$T/base.img' --out '$T/again.img' && cmp '$T/again.img' '$T/disk.img'"

done_testing
