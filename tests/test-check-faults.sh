#!/bin/bash
# wtrack check against known damage on real boots (Debian's kernel, ext4):
# the plugin injects faults (vanish, lie, tear) and writes the ground truth;
# tests/tools/faultset predicts from it, the log and base.img alone which
# file sectors must be bad; the report must name exactly those, each with
# the class the fault implies. Also the acceptance command and its clean twin.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
plan 26

# (a) writes acknowledged but neither stored nor logged: the 2006 bug's shape.
wtrack_run vanish --workload linus2006 --size 16M \
  --plugin-opt fault=vanish:p=0.005:seed=7
check_fault_run vanish lost

# (b) a disk that lies: logged, acknowledged, not stored.
wtrack_run lie --workload torrent --files 2 --size 4M --piece 64K \
  --plugin-opt fault=lie:p=0.01:seed=3
check_fault_run lie lied

# (c) torn writes: some sectors of a 4 KiB write stored, all logged.
wtrack_run tear --workload linus2006 --size 16M \
  --plugin-opt fault=tear:p=0.01:seed=5
check_fault_run tear lied
check "tear: the page view shows each page's torn sectors and no others" \
  [ "$(fact tear pages_match)" = yes ]
check "tear: some pages are torn, not wholly bad" [ "$(fact tear partial_pages)" -gt 0 ]

# (d) the acceptance command, and the same run without the fault.
wtrack_run accept --workload linus2006 --size 32M --plugin-opt fault=vanish:p=0.002:seed=7
check_fault_run accept lost
check "accept: report.txt lists lost runs" grep -q '^  lost  ' "$T/accept/report.txt"
check "accept: the page cache held the data, the disk did not" \
  grep -q 'page cache was correct; the disk was not' "$T/accept/report.txt"
wtrack_run accept-clean --workload linus2006 --size 32M
check "accept without the fault: exits 0" [ "$run_status" = 0 ]
check "accept without the fault: report.json says clean" \
  grep -q '"verdict": *"clean"' "$T/accept-clean/report.json"
done_testing
