#!/bin/bash
# Replay, crash and export of a data=on log whose large writes kept one
# copy (doc/formats.md, "One copy of large writes"): IN_IMAGE records,
# whose bytes are in the SAVED records after them or in the run's final
# image. tests/tools/mkinimage writes such a run (base.img, writes.wtlog,
# disk.img) with the disk it expects after each record; check_in_image
# (tests/lib-in-image.sh) takes any run's LOG, BASE and FINAL (a plugin's
# run too) and checks that every reader agrees with the log's hashes and
# with one another.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-in-image.sh"
require_tools jq cmp cksum
MKINIMAGE=$TOP/tests/tools/mkinimage
require_built "$WTRACK" "$MKINIMAGE"
plan 15

run=$T/run
mkdir -p "$run"
"$MKINIMAGE" "$run"
log=$run/writes.wtlog

check_in_image "$log" "$run/base.img" "$run/disk.img"

# The crafted run: each point as the tool's own model of the disk.
bad=0 n=0
while read -r seq; do
  n=$((n + 1))
  "$WTRACK" replay "$log" --base "$run/base.img" --to-seq "$seq" --out "$T/p.img" 2>/dev/null &&
    cmp -s "$T/p.img" "$run/expect-$seq.img" || { bad=$((bad + 1)); diag "seq $seq differs"; }
done <"$run/points"
check "replay to each of the $n points (every change, every FLUSH) is the disk expected there" \
  test "$n" -gt 10 -a "$bad" = 0
check "disk.img beside the log is the default final image" \
  eval '"$WTRACK" replay "$log" --base "$run/base.img" --out "$T/d.img" && cmp "$T/d.img" "$run/disk.img"'
check "dump names the type SAVED and the flag IN_IMAGE" \
  eval '"$WTRACK" dump "$log" | grep -q "SAVED.*DATA" &&
    "$WTRACK" dump "$log" | grep -q "WRITE *APPLIED,IN_IMAGE"'

# Without a final image: each command refuses, naming the first IN_IMAGE
# record whose bytes only the image holds, and the option.
mkdir -p "$T/nofinal"
cp "$log" "$run/base.img" "$T/nofinal/"
nolog=$T/nofinal/writes.wtlog
for cmd in replay crash export; do
  case $cmd in
    replay) "$WTRACK" replay "$nolog" --base "$run/base.img" --out "$T/n.img" ;;
    crash) "$WTRACK" crash "$T/nofinal" --check true ;;
    export) "$WTRACK" export --format dm-log-writes --base "$run/base.img" "$nolog" "$T/n.dm" ;;
  esac >/dev/null 2>"$T/nofinal.err"
  status=$?
  check "$cmd without a final image exits 2 naming seq 2 and --final-image: $(cat "$T/nofinal.err")" \
    eval 'test $status = 2 && grep -q "seq 2 is a WRITE flagged IN_IMAGE" "$T/nofinal.err" &&
      grep -q -- "--final-image" "$T/nofinal.err"'
done

# A final image changed after the run (a byte of E, which only it holds):
# refused where E is needed, naming the image, the sector and the seq.
cp "$run/disk.img" "$T/changed.img"
printf 'X' | dd of="$T/changed.img" bs=1 seek=$((810 * 1024)) conv=notrunc status=none
"$WTRACK" replay "$log" --base "$run/base.img" --final-image "$T/changed.img" \
  --out "$T/c.img" 2>"$T/changed.err"
status=$?
check "a final image changed after the run: exit 2 naming it, sector 1620 and seq 21" \
  eval 'test $status = 2 && grep -q "changed.img: sector 1620 .*seq 21 .*changed after the run" "$T/changed.err"'
check "... while a replay to before seq 21 needs none of those bytes" \
  eval '"$WTRACK" replay "$log" --base "$run/base.img" --final-image "$T/changed.img" --to-seq 20 \
      --out "$T/c.img" && cmp "$T/c.img" "$run/expect-20.img"'
check_fails "export with that image fails too" \
  "$WTRACK" export --format dm-log-writes --base "$run/base.img" --final-image "$T/changed.img" \
  "$log" "$T/c.dm"

# A killed run's recovery onto the run's own image (the base is the final
# image) skips APPLIED records, IN_IMAGE ones included: the image holds
# them, so even its changed byte of E stays, where resolving E would fail.
check "replay --base FINAL (recovery onto the run's own image) skips IN_IMAGE records" \
  eval '"$WTRACK" replay "$log" --base "$T/changed.img" --final-image "$T/changed.img" \
      --out "$T/own.img" && cmp "$T/own.img" "$T/changed.img"'

done_testing
