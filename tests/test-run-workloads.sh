#!/bin/bash
# Whole runs on Debian's kernel and ext4: each workload boots, runs, powers
# off, and its report is clean; the same seed twice gives the same manifest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
plan 31

wtrack_run linus "--sysctl" vm.dirty_ratio=5 --sysctl vm.dirty_background_ratio=3 \
  --workload linus2006 --size 8M --seed 11
check "linus2006: wtrack-run exits 0 (clean report)" [ "$run_status" = 0 ]
check_run_dir linus
check_run_facts linus

wtrack_run linus-again --sysctl vm.dirty_ratio=5 --sysctl vm.dirty_background_ratio=3 \
  --workload linus2006 --size 8M --seed 11
check "linus2006 again: exits 0" [ "$run_status" = 0 ]
digest () { grep '^file ' "$T/$1.facts" | sed 's/.*digest=//'; }
check_run_facts linus-again
check "the same seed gives the same manifest hashes" \
  test -n "$(digest linus)" -a "$(digest linus)" = "$(digest linus-again)"

wtrack_run torrent --workload torrent --files 3 --size 4M --piece 64K --seed 5
check "torrent: wtrack-run exits 0" [ "$run_status" = 0 ]
check_run_dir torrent
check_run_facts torrent
check "torrent: the manifest holds its 3 files" \
  test "$(grep -c '^file ' "$T/torrent.facts")" = 3

wtrack_run pwrite --workload pwrite --files 2 --size 4M --ops 300 --seed 9
check "pwrite: wtrack-run exits 0" [ "$run_status" = 0 ]
check_run_dir pwrite
check_run_facts pwrite
check "pwrite: report.json says clean" grep -q '"verdict": *"clean"' "$T/pwrite/report.json"
check "pwrite: console shows the guest finished" grep -aq 'WTRACK-GUEST-DONE status=0' "$T/pwrite/console.log"
done_testing
