#!/bin/bash
# wtrack check's btrfs chunk map (RUN_DIR/btrfs-chunks.txt): FIEMAP's
# "physical" on btrfs is a btrfs logical address. A clean run of
# tests/unit/test-check-classes is moved on the disk as two chunks would
# place it (f1's first extent split across them, 64 KiB apart), the space
# it left holding base.img's pre-run content: through the map the check is
# clean, without it the files' data is not where the manifest says.
. "$(dirname "$0")/lib.sh"
require_tools truncate dd
GEN=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$GEN"
plan 10

"$GEN" --make "$T/clean" clean
mv=$T/moved
mkdir -p "$mv"
cp "$T/clean/channel.bin" "$T/clean/writes.wtlog" "$T/clean/base.img" "$mv/"
# Chunk 1: logical [0, 1056768) at 4 MiB; chunk 2: the rest of the 4 MiB
# disk, 64 KiB after chunk 1's end (f1's extent at 1048576 crosses them).
first=1056768 at1=4194304 at2=$((4194304 + 1056768 + 65536))
cp "$T/clean/base.img" "$mv/disk.img"
truncate -s $((at2 + 4194304 - first)) "$mv/disk.img"
dd if="$T/clean/disk.img" of="$mv/disk.img" bs=4096 count=$((first / 4096)) \
   seek=$((at1 / 4096)) conv=notrunc status=none
dd if="$T/clean/disk.img" of="$mv/disk.img" bs=4096 skip=$((first / 4096)) \
   seek=$((at2 / 4096)) conv=notrunc status=none
printf '# LOGICAL LENGTH OFFSET\n0 %d %d\n%d %d %d\n' \
  "$first" "$at1" "$first" $((4194304 - first)) "$at2" >"$mv/btrfs-chunks.txt"

"$WTRACK" check "$mv" >"$T/moved.txt" 2>&1; rc=$?
check "through the chunk map: exit 0" [ "$rc" = 0 ]
check "through the chunk map: verdict clean, every sector checked" \
  grep -q '^verdict: clean: 0 bad sectors' "$T/moved.txt"
check "through the chunk map: f1's 64 sectors checked" grep -q '^/data/f1: clean (64 sectors checked)' "$T/moved.txt"

cp "$mv/btrfs-chunks.txt" "$T/map.txt"
rm "$mv/btrfs-chunks.txt"
"$WTRACK" check "$mv" >"$T/nomap.txt" 2>&1; rc=$?
check "without the map: exit 1 (the data is not at the btrfs addresses)" [ "$rc" = 1 ]
"$WTRACK" check "$mv" --btrfs-chunks "$T/map.txt" >"$T/given.txt" 2>&1; rc=$?
check "--btrfs-chunks FILE: exit 0" [ "$rc" = 0 ]

# A map without chunk 2: the extents there lie in no chunk, not checked.
head -n 2 "$T/map.txt" >"$T/half.txt"
"$WTRACK" check "$mv" --btrfs-chunks "$T/half.txt" >"$T/half.out" 2>&1; rc=$?
check "extents in no chunk: not clean (exit $rc)" [ "$rc" != 0 ]
check "extents in no chunk: said, and not checked" \
  grep -q 'lies in no chunk of the btrfs chunk map: not checked' "$T/half.out"
check "extents in no chunk: the verdict is unchecked, not damage" grep -q '^verdict: unchecked' "$T/half.out"

printf '0 4096\n' >"$T/bad.txt"
"$WTRACK" check "$mv" --btrfs-chunks "$T/bad.txt" >"$T/bad.out" 2>&1; rc=$?
check "a bad map line: exit 2" [ "$rc" = 2 ]
check "a bad map line: the file and line named" grep -q "bad.txt: line 1: \"0 4096\" is not LOGICAL LENGTH OFFSET" "$T/bad.out"
done_testing
