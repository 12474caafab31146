#!/bin/bash
# Whole runs on other filesystems and on IDE (kernels before virtio need it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools mkfs.xfs mkfs.btrfs jq
plan 28

wtrack_run xfs --fs xfs --workload linus2006 --size 4M --seed 3
check "xfs: wtrack-run exits 0 (clean report)" [ "$run_status" = 0 ]
check "xfs: the guest mounted xfs" grep -q '^fs=xfs' <("$WTRACK" dump --channel "$T/xfs/channel.bin" 2>/dev/null | tr ' ' '\n')
check_run_facts xfs

wtrack_run ext2 --fs ext2 --workload pwrite --files 2 --size 2M --ops 200 --seed 4
check "ext2: wtrack-run exits 0" [ "$run_status" = 0 ]
check "ext2: the guest mounted ext2" grep -q '^fs=ext2' <("$WTRACK" dump --channel "$T/ext2/channel.bin" 2>/dev/null | tr ' ' '\n')
check_run_facts ext2

wtrack_run ide --disk-if ide --workload linus2006 --size 4M --seed 6
check "ide: wtrack-run exits 0" [ "$run_status" = 0 ]
check "ide: the guest's disks were ATA (sdX), not virtio" grep -aq 'disk /dev/sd[a-z], channel /dev/sd[a-z]' "$T/ide/console.log"
check_run_facts ide

# btrfs with more data than mkfs.btrfs's 8 MiB data chunk: FIEMAP gives
# btrfs logical addresses, which lie on the disk elsewhere; the check goes
# through btrfs-chunks.txt, the cold pass's extents too. Without the map
# the same run reads as misplaced data, and wtrack crash's checkpoint
# oracle (which reads the same manifests) finds the checkpointed data gone.
cold_runs=yes wtrack_run btrfs --fs btrfs --workload pwrite --files 1 --size 24M --seed 1 \
  --data-log --fsync-every 100 --checkpoint
check "btrfs, 24 MiB: wtrack-run exits 0 (clean report, cold pass included)" [ "$run_status" = 0 ]
check "btrfs: the chunk map has a chunk whose disk offset is not its logical address" \
  awk '!/^#/ && $1 != $3 { moved = 1 } END { exit !moved }' "$T/btrfs/btrfs-chunks.txt"
check "btrfs: the cold pass ran and is clean" grep -q '^cold: clean: 0 of 1 files differ' "$T/btrfs/report.txt"
# crash_oracle NAME: wtrack crash on the btrfs run, every state checked by
# `true`, so only the oracle can fail one; sets rc and writes $T/NAME.json.
crash_oracle () {
  "$WTRACK" crash "$T/btrfs" --check true --max-states 200 --json "$T/$1.json" \
    >"$T/$1.out" 2>&1; rc=$?
  diag_file "$T/$1.out" 6
}
crash_oracle crash-map
facts=$(jq -c '[.checkpoints > 1, .failed_data, ([.states[] | select(.data == "ok")] | length > 0)]' \
          "$T/crash-map.json" 2>/dev/null)
check "btrfs crash through the chunk map: exit 0 ($rc), checkpoints compared, none failed" \
  test "$rc/$facts" = '0/[true,0,true]'
mv "$T/btrfs/btrfs-chunks.txt" "$T/btrfs-chunks.txt"
crash_oracle crash-nomap
facts=$(jq -c '.failed_data > 0' "$T/crash-nomap.json" 2>/dev/null)
check "btrfs crash without the chunk map: exit 1 ($rc), the oracle finds checkpointed data missing" \
  test "$rc/$facts" = 1/true
"$WTRACK" check "$T/btrfs" -q >"$T/btrfs-nomap.txt" 2>&1; rc=$?
check "btrfs without the chunk map: exit 1" [ "$rc" = 1 ]
check "btrfs without the chunk map: the data reads as misplaced" grep -q '^verdict: damaged: .* misplaced' "$T/btrfs-nomap.txt"
done_testing
