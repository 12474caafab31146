#!/bin/bash
# wtrack crash's checkpoint oracle on 600,000 files (tests/tools/mkworstrun
# --crash): a checkpoint manifest and the final one, 57 MB of a 64 MiB
# channel. The oracle used to look each file of the checkpoint up among the
# later manifest's files with a scan: 150,000 files took 38 s before the
# first state, and 600,000 files (16 times as long, about 10 minutes) ran
# into the timeout below, measured on the code before the index (1366d4a~).
# With an index it takes 8 to 10 s on a loaded 2-core machine, most of it
# parsing the manifests, so the timeout is far from both: it fails the
# quadratic code, not a slow machine.
. "$(dirname "$0")/lib.sh"
require_tools jq timeout
GEN=$TOP/tests/tools/mkworstrun
require_built "$WTRACK" "$GEN"
plan 4
FILES=600000

facts=$("$GEN" --crash "$T" $FILES) || { echo "Bail out! mkworstrun --crash failed"; exit 1; }
diag "run: $facts"
check "the run holds two manifests of $FILES files" test "${facts%% channel_used*}" = "files $FILES"

start=$(date +%s)
timeout 120 "$WTRACK" crash "$T" --check true --json "$T/crash.json" >"$T/crash.out" 2>&1
status=$?
diag "wtrack crash: exit $status in $(($(date +%s) - start)) s"
diag_file "$T/crash.out"
check "wtrack crash on $FILES files finishes within 120 s, exit 0 (exit $status; 124: timed out)" \
  test "$status" = 0
check "the oracle uses checkpoint 1: 1 of 1 file sectors to compare" \
  grep -q "^# checkpoint 1 at seq [0-9]*: 1 of 1 file sectors to compare" "$T/crash.out"
check "the state after the MARK compares that sector: ok" \
  test "$(jq -c '[.checkpoints, [.states[] | [.data, .checkpoint, .data_checked]]]' "$T/crash.json")" \
    = '[1,[["none",0,0],["none",0,0],["ok",1,1]]]'
done_testing
