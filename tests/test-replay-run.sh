#!/bin/bash
# wtrack replay on a real run: ext4, the pwrite workload fsyncing every file
# each 50 ops and reporting a checkpoint after each fsync. The whole log
# replays to disk.img; replayed to MARK "checkpoint K", the image holds
# every file exactly as checkpoint K's manifest says (read through its
# extents by tests/tools/ckptfiles, not by wtrack), and not yet as the next
# checkpoint says.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools cmp
require_built "$TOP/tests/tools/ckptfiles"
plan 9

checkpoint_run rr

"$WTRACK" replay "$run/writes.wtlog" --base "$run/base.img" --out "$T/end.img"
check "replay to the end equals disk.img" cmp "$T/end.img" "$run/disk.img"

"$TOP/tests/tools/ckptfiles" list "$run" >"$T/ckpts" || true
sed 's/^/#   /' "$T/ckpts" >&2
ks=$(sed -n 's/^checkpoint \([0-9]*\) files=2$/\1/p' "$T/ckpts" | tr '\n' ' ')
check "the channel holds checkpoints 1 to 4 (200 ops, an fsync every 50), each of 2 files" \
  test "$ks" = "1 2 3 4 "

for k in $ks; do
  "$WTRACK" replay "$run/writes.wtlog" --base "$run/base.img" --out "$T/ck$k.img" \
    --channel "$run/channel.bin" --to-mark "checkpoint $k" 2>"$T/replay$k.err"
  "$TOP/tests/tools/ckptfiles" verify "$run" "$k" "$T/ck$k.img" >"$T/verify$k.out"
  rc=$?
  sed 's/^/#   /' "$T/verify$k.out" >&2
  check "replay --to-mark 'checkpoint $k': both files hold checkpoint $k's hashes in every sector" \
    test "$rc" = 0 -a "$(grep -c ' mismatched=0$' "$T/verify$k.out")" = 2
done

# The oracle can tell: checkpoint 1's disk is not yet checkpoint 2's.
"$TOP/tests/tools/ckptfiles" verify "$run" 2 "$T/ck1.img" >"$T/verify-1-2.out"
rc=$?
sed 's/^/#   /' "$T/verify-1-2.out" >&2
check "the image at checkpoint 1 does not hold checkpoint 2's contents" test "$rc" = 1

"$WTRACK" replay "$run/writes.wtlog" --base "$run/base.img" --out "$T/none.img" \
  --channel "$run/channel.bin" --to-mark "checkpoint 9" 2>"$T/none.err"
check "an absent MARK is exit 2 and named" \
  test $? = 2 -a -n "$(grep 'checkpoint 9' "$T/none.err")"

rm -f "$T"/*.img
done_testing
