#!/bin/bash
# wtrack crash on a real run: ext4 with its default mount options, the
# pwrite workload fsyncing every file each 50 ops with --checkpoint. Every
# prefix state and the reordered ones (--reorder 2) pass e2fsck after their
# journal is recovered, and the checkpoint oracle finds every fsynced file
# as checkpointed. Then the log loses the writes of one checkpointed sector
# (tests/tools/dropwrites): the oracle names that file and sector, exit 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools jq e2fsck
require_built "$TOP/tests/tools/ckptfiles" "$TOP/tests/tools/dropwrites"
plan 14

checkpoint_run cr

# A journalled fs's fsck -n reports the unrecovered journal, not damage:
# recover it on a copy first, check the copy, remove it.
check_cmd='cp --sparse=always {} {}.copy && e2fsck -fy {}.copy >/dev/null 2>&1; e2fsck -fn {}.copy; rc=$?; rm -f {}.copy; exit $rc'

"$WTRACK" crash "$run" --check "$check_cmd" --reorder 2 --seed 1 --max-states 300 \
  --jobs 2 --json "$T/crash.json" >"$T/crash.out" 2>"$T/crash.err"
status=$?
diag_file "$T/crash.out" 12
diag_file "$T/crash.err" 5
check "crash on the sound log exits 0" test "$status" = 0
check "... through the initial state, prefix states and reordered states, all of them" \
  test "$(jq -c '[.complete, ([.states[] | select(.kind == "initial")] | length),
                  ([.states[] | select(.kind == "prefix")] | length > 20),
                  ([.states[] | select(.kind == "reorder")] | length > 5)]' "$T/crash.json")" \
       = '[true,1,true,true]'
check "no state fails e2fsck or the data of a checkpoint" \
  test "$(jq -c '[.failed, .failed_check, .failed_data, ([.states[] | select(.status != 0)] | length)]' \
          "$T/crash.json")" = '[0,0,0,0]'
check "the oracle knows the 4 checkpoints and compared sectors in states after each" \
  test "$(jq -c '[.checkpoints, ([.states[] | select(.data == "ok") | .checkpoint] | unique)]' \
          "$T/crash.json")" = '[4,[1,2,3,4]]'
check "states before checkpoint 1 have no data verdict" \
  test "$(jq '[.states[] | select(.checkpoint == 0 and .data != "none")] | length' "$T/crash.json")" = 0
n=$(jq '[.states[] | select(.kind == "reorder")][0].state' "$T/crash.json")
check "{} became the image's path: e2fsck checked a scratch copy (state-$n.log)" \
  grep -q 'crash/scratch[-0-9]*\.img\.copy: .* files' "$run/crash/state-$n.log"
check "no copy and no scratch copy of a job is left behind" \
  test -z "$(find "$run/crash" -maxdepth 1 \( -name '*.copy' -o -name '*scratch-*' \))"

# Known damage: every write of one sector of /data/f1 that checkpoint 1 has
# and no later op rewrites, taken out of the log.
"$TOP/tests/tools/ckptfiles" stable "$run" 1 >"$T/stable.out"
sed 's/^/#   /' "$T/stable.out" >&2
read -r _ path fsec dsec <"$T/stable.out"
fsec=${fsec#file_sector=}
dsec=${dsec#disk_sector=}
"$TOP/tests/tools/dropwrites" "$run/writes.wtlog" "$T/dropped.wtlog" "$dsec" >"$T/drop.out"
check "dropwrites takes that sector's writes out of the log" test $? = 0
sed 's/^/#   /' "$T/drop.out" >&2

"$WTRACK" crash "$run" --log "$T/dropped.wtlog" --check "$check_cmd" --jobs 2 \
  --json "$T/dropped.json" >"$T/dropped.out" 2>"$T/dropped.err"
status=$?
grep -v ' ok     ok  *$' "$T/dropped.out" | head -n 12 | sed 's/^/#   /' >&2
check "crash on the log without them exits 1" test "$status" = 1
check "the data verdict fails, e2fsck does not" \
  test "$(jq -c '[(.failed_data > 0), .failed_check]' "$T/dropped.json")" = '[true,0]'
check "the table names $path and its file sector $fsec" \
  grep -Eq "^#  +state [0-9]+: checkpoint [0-9]+: $path: file sectors ([0-9]+)-([0-9]+) " "$T/dropped.out" \
  -a -n "$(jq --arg p "$path" --argjson s "$fsec" '.states[].data_bad[] |
            select(.path == $p and .file_sector <= $s and $s < .file_sector + .sectors)' \
            "$T/dropped.json" | head -c1)"
check "every bad run is in $path, within the dropped 4 KiB around sector $fsec" \
  test "$(jq --arg p "$path" --argjson s "$fsec" '[.states[].data_bad[] |
            select(.path != $p or .file_sector + .sectors <= $s - 8 or .file_sector > $s + 8)] | length' \
            "$T/dropped.json")" = 0
check "the first bad state follows checkpoint 1's MARK" \
  test "$(jq '[.states[] | select(.data == "bad")][0].checkpoint' "$T/dropped.json")" = 1

rm -f "$run"/*.img "$run"/crash/*.img
done_testing
