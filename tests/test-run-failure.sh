#!/bin/bash
# A guest that fails (a mount option the filesystem rejects) makes
# wtrack-run exit non-zero within seconds, with the guest's error text; an
# option the workload does not take is bad usage before anything starts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
plan 7

wtrack_run badmount --mount-opts no_such_option_wtrack --workload pwrite --files 1 --size 1M --ops 10 --timeout 300
check "wtrack-run exits 3 (the run failed)" [ "$run_status" = 3 ]
check "it fails fast, not by timeout (${run_secs}s < 120s)" [ "$run_secs" -lt 120 ]
# The guest's own words, not just any "mount" (the run directory is
# named badmount): its command, the option, and what the kernel said.
check "the error gives the failed mount command and the kernel's reason" \
  grep -q "^wtrack-run: the guest failed: mount -t ext4 -o no_such_option_wtrack /dev/vda .*Invalid argument; kernel: .*no_such_option_wtrack" "$T/badmount.err"
check "the guest's RESULT reached the channel with a non-zero status" \
  grep -Eq 'status=[1-9]' <("$WTRACK" dump --channel "$T/badmount/channel.bin" 2>/dev/null | tr ' ' '\n')

wtrack_run badopt --workload pwrite --files 1 --size 1M --ops 10 --no-such-option
check "a workload option it does not take: exit 4 (bad usage)" [ "$run_status" = 4 ]
check "... naming the option" grep -q "^wtrack-run: the workload refuses its options: pwrite: bad option: --no-such-option" "$T/badopt.err"
check "... before anything started (no run directory, ${run_secs}s)" [ ! -e "$T/badopt" ]
done_testing
