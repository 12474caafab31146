#!/bin/bash
# Replay, crash and export of a data=on log whose large writes kept one
# copy (doc/formats.md, "One copy of large writes"): IN_IMAGE records,
# whose bytes are in the SAVED records after them or in the run's final
# image. tests/tools/mkinimage writes such a run (base.img, writes.wtlog,
# disk.img) with the disk it expects after each record; check_in_image
# takes any run's LOG, BASE and FINAL (a plugin's run too) and checks that
# every reader agrees with the log's hashes and with one another.
. "$(dirname "$0")/lib.sh"
require_tools jq cmp cksum
MKINIMAGE=$TOP/tests/tools/mkinimage
require_built "$WTRACK" "$MKINIMAGE"
plan 15

# The seqs of LOG's FLUSH and FUA points and of its IN_IMAGE records.
in_image_points () {
  "$WTRACK" dump --json "$1" | jq -r 'select(.seq) |
    select(.type == "FLUSH" or (.flags | index("FUA")) or (.flags | index("IN_IMAGE"))) |
    .seq'
}

# LOG cut after record SEQ: the log as it stood then (unclosed).
log_prefix () {
  local log=$1 seq=$2 out=$3 end
  end=$("$WTRACK" dump --json "$log" | jq -r --argjson s "$seq" '
    select(.seq == $s + 1) | .log_offset')
  if [ -z "$end" ]; then cp "$log" "$out"; else head -c "$end" "$log" >"$out"; fi
}

# LOG exported to DIR/x.dm, imported to DIR/imp.wtlog (which has every
# write's bytes: no IN_IMAGE or SAVED record), replayed: FINAL.
export_round_trip () {
  local log=$1 base=$2 final=$3 d=$4
  "$WTRACK" export --format dm-log-writes --base "$base" --final-image "$final" \
    "$log" "$d/x.dm" &&
    "$WTRACK" import dm-log-writes -s "$(stat -c %s "$base")" "$d/x.dm" "$d/imp.wtlog" &&
    ! "$WTRACK" dump "$d/imp.wtlog" | grep -qE 'SAVED|IN_IMAGE' &&
    "$WTRACK" replay "$d/imp.wtlog" --base "$base" --out "$d/imp.img" &&
    cmp "$d/imp.img" "$final"
}

# check_in_image LOG BASE FINAL: 5 checks.
check_in_image () {
  local log=$1 base=$2 final=$3 d=$T/check.$RANDOM seq bad=0 n=0
  mkdir -p "$d"
  check "the whole log replays to the final image" \
    eval '"$WTRACK" replay "$log" --base "$base" --final-image "$final" --out "$d/all.img" &&
      cmp "$d/all.img" "$final"'
  # Each point: the replay holds every sector's last hash up to it.
  for seq in $(in_image_points "$log"); do
    n=$((n + 1))
    log_prefix "$log" "$seq" "$d/prefix.wtlog"
    "$WTRACK" replay "$log" --base "$base" --final-image "$final" --to-seq "$seq" \
      --out "$d/point.img" 2>"$d/err" &&
      "$WTRACK" verify "$d/prefix.wtlog" "$d/point.img" >"$d/verify" 2>&1 ||
      { bad=$((bad + 1)); diag "seq $seq:" "$(cat "$d/err" "$d/verify")"; }
  done
  check "replay to each of the $n FLUSH, FUA and IN_IMAGE points holds the log's hashes up to it" \
    test "$n" -gt 0 -a "$bad" = 0
  # crash: every state (with reordered epochs) as the replay to its seq.
  mkdir -p "$d/run"
  "$WTRACK" crash "$d/run" --log "$log" --base "$base" --final-image "$final" \
    --reorder 3 --json "$d/crash.json" --check "cksum < {} >>'$d/sums'" >"$d/crash.out" 2>&1 ||
    diag_file "$d/crash.out"
  bad=0 n=0
  local kinds
  kinds=$(jq -r '.states[] | "\(.kind) \(.seq)"' "$d/crash.json" 2>/dev/null)
  while read -r kind seq; do
    n=$((n + 1))
    [ "$kind" = prefix ] || [ "$kind" = initial ] || continue
    "$WTRACK" replay "$log" --base "$base" --final-image "$final" --to-seq "$seq" \
      --out "$d/state.img" 2>/dev/null
    [ "$(cksum <"$d/state.img")" = "$(sed -n "${n}p" "$d/sums")" ] ||
      { bad=$((bad + 1)); diag "crash state $n (seq $seq) differs"; }
  done <<<"$kinds"
  check "crash --reorder: each of its $n states made, the initial and prefix ones as the replay to their seq" \
    test "$n" -gt 1 -a "$bad" = 0 -a "$(wc -l <"$d/sums")" = "$n"
  # export: dm-log-writes, read back by wtrack's own importer.
  check "export to dm-log-writes, imported again, replays to the final image" \
    export_round_trip "$log" "$base" "$final" "$d"
  bad=0 n=0
  local flushes k
  flushes=$("$WTRACK" dump --json "$log" | jq -s '[.[] | select(.type == "FLUSH")] | length')
  for k in $(seq 1 "$flushes"); do
    n=$((n + 1))
    "$WTRACK" replay "$d/imp.wtlog" --base "$base" --to-flush "$k" --out "$d/a.img" 2>/dev/null
    "$WTRACK" replay "$log" --base "$base" --final-image "$final" --to-flush "$k" \
      --out "$d/b.img" 2>/dev/null
    cmp -s "$d/a.img" "$d/b.img" || { bad=$((bad + 1)); diag "flush $k differs"; }
  done
  check "the imported export replays to each of the $n flushes as the log does" \
    test "$n" -gt 0 -a "$bad" = 0
}

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
