#!/bin/bash
# Whole runs on other filesystems and on IDE (kernels before virtio need it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools mkfs.xfs
plan 21

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
done_testing
