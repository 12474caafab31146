#!/bin/bash
# wtrack crash's check command and its exit status, on crafted logs
# (tests/tools/craftlog): {} is the image's path whether the command leaves
# it bare or puts it in double or single quotes (in a run directory whose
# name needs quoting); a torn log gives its states up to the tear, exit 2
# and "complete": false, as every other command exits 2 on a torn log.
. "$(dirname "$0")/lib.sh"
require_tools jq truncate
require_built "$WTRACK" "$TOP/tests/tools/craftlog"
plan 11
CRAFT=$TOP/tests/tools/craftlog

run="$T/a run's dir"
mkdir -p "$run"
truncate -s 1M "$run/base.img"
"$CRAFT" wtlog "$run/writes.wtlog" 1M write:0:4096 flush write:8192:4096 flush \
  write:65536:4096 flush

for cmd in 'test -s {}' 'test -s "{}"' "test -s '{}'" 'f="{}"; test -s "$f" && test "$f" = {}'; do
  "$WTRACK" crash "$run" --check "$cmd" --json "$T/q.json" >"$T/q.out" 2>"$T/q.err"
  status=$?
  diag "--check '$cmd': exit $status"
  check "--check '$cmd' passes on every state (the path reached it whole)" \
    test "$status" = 0 -a "$(jq -c '[.failed_check, (.states | length)]' "$T/q.json")" = '[0,4]'
done
check "... and {} became the scratch image's path" \
  grep -q "^$T/a run's dir/crash/scratch.img\$" <("$WTRACK" crash "$run" --check 'echo "{}"' \
     >/dev/null && cat "$run/crash/state-0.log")

# Torn: the log cut in the middle of its last record (the last FLUSH); the
# states before it are still made and checked, the write before the tear
# ends the log.
size=$(stat -c %s "$run/writes.wtlog")
head -c $((size - 30)) "$run/writes.wtlog" >"$T/torn.wtlog"
"$WTRACK" dump "$T/torn.wtlog" >"$T/torn.dump" 2>&1
diag_file "$T/torn.dump" 4
"$WTRACK" crash "$run" --log "$T/torn.wtlog" --check true --json "$T/torn.json" \
  >"$T/torn.out" 2>"$T/torn.err"
status=$?
diag_file "$T/torn.out" 6
diag_file "$T/torn.err" 3
check "crash on a torn log exits 2" test "$status" = 2
check "... says where the log is torn on stderr" \
  grep -q 'wtrack crash: .*torn.wtlog: bad record at byte [0-9]* .*(states end at seq 5)' "$T/torn.err"
check "... and its JSON says complete: false" test "$(jq .complete "$T/torn.json")" = false
check "... with the states before the tear (initial, 2 prefix states, the end)" \
  test "$(jq -c '[.states[].kind]' "$T/torn.json")" = '["initial","prefix","prefix","prefix"]'
check "... and the summary says the log is torn" grep -q '^# 4 states.*the log is torn' "$T/torn.out"
"$WTRACK" crash "$run" --check true --json "$T/whole.json" >/dev/null
check "a whole log is still exit 0, complete: true" \
  test $? = 0 -a "$(jq .complete "$T/whole.json")" = true
done_testing
