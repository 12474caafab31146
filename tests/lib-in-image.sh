# shellcheck shell=bash
# tests/lib-in-image.sh: the readers of a data=on log whose large writes
# kept one copy (IN_IMAGE and SAVED records, doc/formats.md), checked on
# any run: a crafted one (tests/test-replay-in-image.sh) or a plugin's.
# Source after lib.sh; needs jq, cmp, cksum.
#
#   check_in_image LOG BASE FINAL   5 test points: replay to the end is
#                                   FINAL; replay to FLUSH, FUA and
#                                   IN_IMAGE points holds the log's hashes
#                                   up to each (wtrack verify of the log
#                                   cut there); crash --reorder's initial
#                                   and prefix states are the replays to
#                                   their seqs; export to dm-log-writes,
#                                   imported again, replays to FINAL and to
#                                   each flush as LOG does
#
# A long run's points are sampled: at most IN_IMAGE_POINTS (default 12)
# of each kind, spread over the log, and crash makes at most
# IN_IMAGE_STATES states (default 40).

# At most N of the lines of stdin, spread evenly, the last one kept.
in_image_sample () {
  awk -v n="$1" '{ l[NR] = $0 } END {
    if (NR <= n) { for (i = 1; i <= NR; i++) print l[i]; exit }
    for (i = 1; i <= n; i++) print l[int(i * NR / n)] }'
}

# The seqs of LOG's FLUSH and FUA points and of its IN_IMAGE records.
in_image_points () {
  "$WTRACK" dump --json "$1" | jq -r 'select(.seq) |
    select(.type == "FLUSH" or (.flags | index("FUA")) or (.flags | index("IN_IMAGE"))) |
    .seq' | in_image_sample "${IN_IMAGE_POINTS:-12}"
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
    --reorder 3 --max-states "${IN_IMAGE_STATES:-40}" --json "$d/crash.json" \
    --check "cksum < {} >>'$d/sums'" >"$d/crash.out" 2>&1 || diag_file "$d/crash.out"
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
  for k in $(seq 1 "$flushes" | in_image_sample "${IN_IMAGE_POINTS:-12}"); do
    n=$((n + 1))
    "$WTRACK" replay "$d/imp.wtlog" --base "$base" --to-flush "$k" --out "$d/a.img" 2>/dev/null
    "$WTRACK" replay "$log" --base "$base" --final-image "$final" --to-flush "$k" \
      --out "$d/b.img" 2>/dev/null
    cmp -s "$d/a.img" "$d/b.img" || { bad=$((bad + 1)); diag "flush $k differs"; }
  done
  check "the imported export replays to each of the $n flushes as the log does" \
    test "$n" -gt 0 -a "$bad" = 0
}

