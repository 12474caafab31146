#!/bin/bash
# wtrack replay on logs it must refuse or read only in part: a log recorded
# without data=on, a WRITE without data in a data log, a torn log; and the
# images it writes: equal to an independent model of a synthetic log, and
# sparse where the log zeroed or trimmed.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io cmp truncate
require_built "$PLUGIN" "$WTRACK" "$TOP/tests/unit/gen-wtlog"
plan 20
GEN=$TOP/tests/unit/gen-wtlog

# A synthetic log, and the disk it leads to from zeroes, computed by the
# generator's own model.
"$GEN" "$T/gen.wtlog" --disk-size 32M --bytes 48M --write-size 64K --seed 7 \
  --final "$T/gen-final.img"
truncate -s 32M "$T/zero.img"
check "a synthetic log of 800 writes replays" \
  "$WTRACK" replay "$T/gen.wtlog" --base "$T/zero.img" --out "$T/gen.img"
check "... to the generator's model of the disk" cmp "$T/gen.img" "$T/gen-final.img"

# Recorded without data=on: hashes only, nothing to replay.
truncate -s 4M "$T/nodata.img"
start_nbdkit nodata "$T/nodata.sock" "$PLUGIN" "$T/nodata.img" log="$T/nodata.wtlog"
qemu-io -f raw "nbd+unix:///?socket=$T/nodata.sock" -c 'write -P 1 0 64k' >/dev/null
stop_nbdkit nodata
out=$("$WTRACK" replay "$T/nodata.wtlog" --base "$T/zero.img" --out "$T/x.img" 2>&1)
check "a log without data is refused (exit 2)" test $? -eq 2
check "... saying why" \
  grep -q 'has no write payloads (recorded without data=on): replay needs them' <<<"$out"
# export and crash refuse it the same way (one check, checker/lib/target.c)
out=$("$WTRACK" export --format dm-log-writes "$T/nodata.wtlog" "$T/x.dmlog" 2>&1)
check "export refuses it too, saying why" \
  grep -q 'nodata.wtlog has no write payloads (recorded without data=on): dm-log-writes needs them' <<<"$out"
mkdir -p "$T/nodata-run"
cp "$T/nodata.wtlog" "$T/nodata-run/writes.wtlog"
cp "$T/zero.img" "$T/nodata-run/base.img"
out=$("$WTRACK" crash "$T/nodata-run" --check true 2>&1); rc=$?
check "crash refuses it too (exit $rc), saying why" \
  test "$rc" = 2 -a -n "$(grep 'has no write payloads (recorded without data=on): each crash state needs them' <<<"$out")"

"$GEN" "$T/hole.wtlog" --disk-size 32M --bytes 1M --write-size 64K --no-data-at 5
out=$("$WTRACK" replay "$T/hole.wtlog" --base "$T/zero.img" --out "$T/x.img" 2>&1)
check "a WRITE without data in a data log is an error (exit 2)" test $? -eq 2
check "... naming its seq" grep -q 'seq 5: WRITE .* has no data' <<<"$out"

# Torn: the log cut in the middle of a record.
size=$(stat -c %s "$T/gen.wtlog")
head -c $((size / 2 + 100)) "$T/gen.wtlog" >"$T/torn.wtlog"
out=$("$WTRACK" replay "$T/torn.wtlog" --base "$T/zero.img" --out "$T/torn.img" 2>&1)
check "a torn log is exit 2" test $? -eq 2
diag "$out"
last=$(sed -n 's/.*applied the records up to seq \([0-9]*\).*/\1/p' <<<"$out")
check "... saying where it broke and the last seq applied" \
  test -n "$last" -a -n "$(grep 'bad record at byte' <<<"$out")"
"$WTRACK" replay "$T/gen.wtlog" --base "$T/zero.img" --out "$T/upto.img" --to-seq "$last"
check "... with everything before the tear applied" cmp "$T/torn.img" "$T/upto.img"
check "--to-seq before the tear is a success" \
  "$WTRACK" replay "$T/torn.wtlog" --base "$T/zero.img" --out "$T/x.img" --to-seq $((last / 2))

# Sparse: zeroed and trimmed ranges become holes in the image.
truncate -s 16M "$T/sparse-base.img"
cp --sparse=always "$T/sparse-base.img" "$T/sparse-disk.img"
start_nbdkit sparse "$T/sparse.sock" "$PLUGIN" "$T/sparse-disk.img" log="$T/sparse.wtlog" data=on
qemu-io -f raw "nbd+unix:///?socket=$T/sparse.sock" -c 'write -P 0x11 0 12M' \
  -c 'discard 0 4M' -c 'write -z 4M 4M' -c 'write -z -u 8M 2M' -c 'flush' >/dev/null
stop_nbdkit sparse
# The 12 MiB write was kept once, in the image (IN_IMAGE), its overwritten
# parts saved in the log first: the image after the run is the final one.
"$WTRACK" replay "$T/sparse.wtlog" --base "$T/sparse-base.img" \
  --final-image "$T/sparse-disk.img" --out "$T/sparse-out.img"
check "the replay of writes, trims and zeroes equals the disk" \
  cmp "$T/sparse-out.img" "$T/sparse-disk.img"
check_fails "... which the writes changed" cmp -s "$T/sparse-out.img" "$T/sparse-base.img"
allocated=$(( $(stat -c '%b * %B' "$T/sparse-out.img") ))
diag "12 MiB written, 10 MiB of it zeroed or trimmed: $allocated bytes allocated"
check "... and holds holes where they were (at most 3 MiB allocated)" \
  test "$allocated" -le $((3 << 20))
check "... while its size is the disk's" test "$(stat -c %s "$T/sparse-out.img")" = $((16 << 20))
check "an unreadable base is an error naming it" \
  bash -c "'$WTRACK' replay '$T/gen.wtlog' --base '$T/nosuch.img' --out '$T/x.img' 2>&1 | grep -q 'nosuch.img'"

# A base smaller than the log's disk is refused before --out is touched.
truncate -s 1M "$T/small.img"
echo "keep me" >"$T/keep.img"
out=$("$WTRACK" replay "$T/gen.wtlog" --base "$T/small.img" --out "$T/keep.img" 2>&1)
check "a base smaller than the log's disk is exit 2" test $? -eq 2
check "... saying so" grep -q 'small.img: 1048576 bytes, smaller than the log.s disk' <<<"$out"
check "... and leaves --out as it was" test "$(cat "$T/keep.img")" = "keep me"

done_testing
