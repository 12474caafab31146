#!/bin/bash
# wtrack crash on logs the plugin recorded from qemu-io: a "data" block then
# a "commit" block with no flush between leaves a reordered state with the
# commit and without the data (a check that looks for exactly that fails
# there, exit 1); with a flush between, no state has it (exit 0).
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io jq
require_built "$PLUGIN" "$WTRACK"
plan 10

# The check: the commit block (0xcc at 64 KiB) without the data block (0xdd
# at 0) is a broken journal.
cat >"$T/check.sh" <<'EOF'
#!/bin/sh
img=$1
commit=$(od -An -tx1 -N1 -j 65536 "$img" | tr -d ' ')
data=$(od -An -tx1 -N1 -j 0 "$img" | tr -d ' ')
echo "commit=$commit data=$data"
[ "$commit" = cc ] && [ "$data" != dd ] && { echo "commit without its data"; exit 1; }
exit 0
EOF
chmod +x "$T/check.sh"

# One run directory per scenario. --cache writeback: qemu-io sends no FUA,
# so nothing but the flushes orders the writes.
make_run () {
  local name=$1; shift
  mkdir -p "$T/$name"
  truncate -s 1M "$T/$name/base.img"
  cp "$T/$name/base.img" "$T/$name/disk.img"
  start_nbdkit "$name" "$T/$name.sock" "$PLUGIN" "$T/$name/disk.img" \
    log="$T/$name/writes.wtlog" data=on
  qemu-io -f raw --cache writeback "nbd+unix:///?socket=$T/$name.sock" "$@" >/dev/null
  stop_nbdkit "$name"
}
make_run noflush -c 'write -P 0xdd 0 4k' -c 'write -P 0xcc 64k 4k' -c 'flush'
make_run flush -c 'write -P 0xdd 0 4k' -c 'flush' -c 'write -P 0xcc 64k 4k' -c 'flush'

check "the final disk is sound (the check passes on it)" "$T/check.sh" "$T/noflush/disk.img"

"$WTRACK" crash "$T/noflush" --check "$T/check.sh {}" >"$T/prefix.out" 2>&1
check "prefix states only: every check passes (exit 0)" test $? -eq 0
sed 's/^/#   /' "$T/prefix.out" >&2

"$WTRACK" crash "$T/noflush" --reorder 4 --seed 1 --check "$T/check.sh {}" \
  --json "$T/noflush.json" >"$T/noflush.out" 2>&1
check "no flush between: crash --reorder exits 1" test $? -eq 1
sed 's/^/#   /' "$T/noflush.out" >&2
commit_seq=$("$WTRACK" dump --json "$T/noflush/writes.wtlog" |
             jq -r 'select(.type == "WRITE" and .offset == 65536) | .seq')
check "the failing state holds the commit write alone" \
  test "$(jq -r '[.states[] | select(.status != 0) | .writes] | join(";")' "$T/noflush.json")" \
       = "writes $commit_seq"
n=$(jq '[.states[] | select(.status != 0)] | .[0].state' "$T/noflush.json")
check "its check output is in crash/state-N.log" \
  grep -q 'commit without its data' "$T/noflush/crash/state-$n.log"
check "the reordered state with the data alone passes" \
  test "$(jq '[.states[] | select(.kind == "reorder" and .status == 0)] | length' "$T/noflush.json")" = 1
check "the summary counts the failure" grep -q '1 failed the check' "$T/noflush.out"

"$WTRACK" crash "$T/flush" --reorder 4 --seed 1 --check "$T/check.sh {}" \
  --json "$T/flush.json" >"$T/flush.out" 2>&1
check "a flush between: no state has the commit without the data (exit 0)" test $? -eq 0
sed 's/^/#   /' "$T/flush.out" >&2
check "... while the states were made (a prefix after each flush)" \
  test "$(jq '[.states[] | select(.kind == "prefix")] | length' "$T/flush.json")" -ge 2

"$WTRACK" crash "$T/noflush" --reorder 4 --max-states 1 --check "$T/check.sh {}" \
  --json "$T/max.json" >/dev/null 2>&1
check "--max-states stops early" test "$(jq '.states | length' "$T/max.json")" = 1

done_testing
