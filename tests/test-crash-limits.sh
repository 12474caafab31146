#!/bin/bash
# wtrack crash in bounded memory on crafted logs (tests/tools/craftlog): a
# legal 2 GiB ZERO and a 2 GiB TRIM, and 128 MiB of writes in one epoch,
# with and without --reorder. Memory (max RSS, /usr/bin/time -v) must not
# grow with the size of a request or of an epoch: an epoch's data is read
# back from the log and the bytes to undo go to a file.
. "$(dirname "$0")/lib.sh"
require_tools truncate cmp
require_built "$WTRACK" "$TOP/tests/tools/craftlog"
[ -x /usr/bin/time ] || skip_all "missing tool: /usr/bin/time"
plan 12
CRAFT=$TOP/tests/tools/craftlog
LIMIT_KB=$((48 * 1024))

# max_rss_kb OUT ARGS...: runs wtrack ARGS, its stdout into OUT; echoes
# "STATUS RSS_KB".
max_rss_kb () {
  local out=$1; shift
  /usr/bin/time -v -o "$T/time.txt" "$WTRACK" "$@" >"$out" 2>"$out.err"
  local status=$?
  echo "$status $(awk -F': ' '/Maximum resident/ { print $2 }' "$T/time.txt")"
}

mkdir -p "$T/zero" "$T/epoch"
truncate -s 2049M "$T/zero/base.img"
"$CRAFT" wtlog "$T/zero/writes.wtlog" 2049M write:0:4096 flush zero:4096:2G trim:1M:2G \
  write:8192:4096 flush
for reorder in 0 3; do
  read -r status rss < <(max_rss_kb "$T/zero.out" crash "$T/zero" --check true \
                          --reorder $reorder --json "$T/zero.json")
  diag "2 GiB ZERO and TRIM, --reorder $reorder: exit $status, max RSS $rss KiB"
  check "crash --reorder $reorder over a 2 GiB ZERO and TRIM exits 0" test "$status" = 0
  check "... in under $((LIMIT_KB / 1024)) MiB of memory ($rss KiB)" test "$rss" -lt $LIMIT_KB
done
# Undoing the reordered subsets restored every state: the last one is the
# log replayed (compared where the writes lie; the rest must be holes, which
# read as zeroes: cmp over 2 GiB of holes takes half a minute here).
"$WTRACK" replay "$T/zero/writes.wtlog" --base "$T/zero/base.img" --out "$T/zero/replayed.img"
check "after the reordered states, the last state is the replayed log" \
  cmp -n 2M "$T/zero/crash/scratch.img" "$T/zero/replayed.img"
check "... and holes past its first MiB" \
  test "$(du -k "$T/zero/crash/scratch.img" | cut -f1)" -le 1024
rm -f "$T/zero"/*.img "$T/zero/crash"/*.img

# 128 MiB of writes between two flushes (was kept twice in memory).
truncate -s 256M "$T/epoch/base.img"
"$CRAFT" wtlog "$T/epoch/writes.wtlog" 256M write:0:4096 flush write:1M:1M:128 flush
for reorder in 0 2; do
  read -r status rss < <(max_rss_kb "$T/epoch.out" crash "$T/epoch" --check true \
                          --reorder $reorder --json "$T/epoch.json")
  diag "128 MiB epoch, --reorder $reorder: exit $status, max RSS $rss KiB"
  check "crash --reorder $reorder over a 128 MiB epoch exits 0" test "$status" = 0
  check "... in under $((LIMIT_KB / 1024)) MiB of memory ($rss KiB)" test "$rss" -lt $LIMIT_KB
done
check "the last state equals the replayed log" \
  cmp "$T/epoch/crash/scratch.img" <("$WTRACK" replay "$T/epoch/writes.wtlog" \
       --base "$T/epoch/base.img" --out "$T/epoch/replayed.img" && cat "$T/epoch/replayed.img")
check "the reordered states hold subsets of the 128 writes" \
  test "$(jq -c '[.states[] | select(.kind == "reorder") | .epoch_writes] | unique' \
          "$T/epoch.json")" = '[128]'
rm -f "$T/epoch"/*.img "$T/epoch/crash"/*.img
done_testing
