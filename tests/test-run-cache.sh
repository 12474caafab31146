#!/bin/bash
# The run caches: mkinitramfs --cache keys an initramfs by the content of
# everything in it (a changed guest is a miss, the same inputs a hit with
# the same bytes); two wtrack-run started at once on a cold cache both
# succeed and leave one entry of each kind and no temporary file; a warm run
# says "cache hit" for both, starts from the cached pristine image, and its
# report.json carries the phases' timings and is otherwise check's report.
# All caches are private (--cache), so the shared kernel cache is only read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools make gcc flex bison bc jq sha256sum
plan 19

kernel=$("$TOP/scripts/build-kernel" 2>"$T/build.err") || { sed 's/^/#   /' "$T/build.err" >&2; bail_out; }
mkinit="$TOP/scripts/mkinitramfs"
cache=$T/cache

# ---- mkinitramfs --cache, no boot -----------------------------------------
initramfs_entries () { find "$cache/initramfs" -maxdepth 1 -type f -name '*.img' -not -name '.*' | wc -l; }
temp_files () { find "$cache" -name '.*' -type f | wc -l; }

"$mkinit" --kernel "$kernel" --fs ext4 --cache "$cache/initramfs" --out "$T/i1.img" 2>"$T/i1.err" || true
check "a first build is a miss and is stored" grep -q 'cache miss: ' "$T/i1.err"
"$mkinit" --kernel "$kernel" --fs ext4 --cache "$cache/initramfs" --out "$T/i2.img" 2>"$T/i2.err" || true
check "the same inputs are a hit" grep -q 'cache hit: ' "$T/i2.err"
check "... with the same bytes as the build" cmp -s "$T/i1.img" "$T/i2.img"
# a guest with different content (a byte appended: still a static ELF)
cp "$GUEST" "$T/guest2"; printf 'x' >>"$T/guest2"
"$mkinit" --kernel "$kernel" --fs ext4 --guest "$T/guest2" --cache "$cache/initramfs" \
  --out "$T/i3.img" 2>"$T/i3.err" || true
check "a guest with other content is a miss" grep -q 'cache miss: ' "$T/i3.err"
check "... and holds that guest" \
  cmp -s "$T/guest2" <(gzip -dc "$T/i3.img" | (cd "$T" && cpio -i --quiet --to-stdout bin/wtrack-guest))
check "two keys, two entries, no temporary file" \
  test "$(initramfs_entries)" = 2 -a "$(temp_files)" = 0
rm -rf "$cache"

# four builds at once on a cold cache: all succeed with the same bytes
pids=()
for i in 1 2 3 4; do
  "$mkinit" --kernel "$kernel" --fs xfs --cache "$cache/initramfs" --out "$T/p$i.img" 2>"$T/p$i.err" &
  pids+=($!)
  on_exit kill_pid $!
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
check "four builds at once all succeed" test "$failed" = 0
entry=$(find "$cache/initramfs" -maxdepth 1 -type f -name '*.img' -not -name '.*' | head -n 1)
same=0
for i in 1 2 3 4; do cmp -s "$T/p$i.img" "$entry" && same=$((same + 1)); done
check "... each wrote the cached entry's bytes" test "$same" = 4
check "... and the cache holds one entry, no temporary file" \
  test "$(initramfs_entries)" = 1 -a "$(temp_files)" = 0
rm -rf "$cache"

# ---- whole runs ------------------------------------------------------------
run_args=(--accel tcg --no-cold --kernel "$kernel" --cache "$cache" --disk-size 256M
          --workload linus2006 --size 4M)
start=$SECONDS
"$TOP/scripts/wtrack-run" "${run_args[@]}" --seed 1 --out "$T/a" >"$T/a.out" 2>"$T/a.err" & pa=$!
on_exit kill_pid "$pa"
"$TOP/scripts/wtrack-run" "${run_args[@]}" --seed 2 --out "$T/b" >"$T/b.out" 2>"$T/b.err" & pb=$!
on_exit kill_pid "$pb"
sa=0; wait "$pa" || sa=$?
sb=0; wait "$pb" || sb=$?
diag "two runs at once: exit $sa and $sb in $((SECONDS - start))s"
[ "$sa" = 0 ] || sed 's/^/#   a: /' "$T/a.err" >&2
[ "$sb" = 0 ] || sed 's/^/#   b: /' "$T/b.err" >&2
grep -h 'cache \(hit\|miss\)' "$T/a.err" "$T/b.err" | sed 's/^/#   /' >&2
check "two runs started at once on a cold cache both succeed" test "$sa" = 0 -a "$sb" = 0
check "... the cache holds one initramfs" test "$(initramfs_entries)" = 1
check "... and one pristine image, and no temporary file" \
  test "$(find "$cache/images" -type f -not -name '.*' | wc -l)" = 1 -a "$(temp_files)" = 0

wtrack_run warm "${run_args[@]}" --seed 3 --timings
grep 'wtrack-run: ' "$T/warm.err" | sed 's/^/#   warm: /' >&2
check "a warm run succeeds" test "$run_status" = 0
check "... its log says cache hit for the disk and the initramfs" \
  test "$(grep -c 'cache hit: ' "$T/warm.err")" = 2
check "... its base.img is the cached pristine image" \
  cmp -s "$T/warm/base.img" "$(find "$cache/images" -type f -not -name '.*')"
check "--timings prints every phase" \
  grep -Eq '^wtrack-run: timings \(seconds\): setup=[0-9.]+ initramfs=[0-9.]+ boot=[0-9.]+ check=[0-9.]+ total=[0-9.]+$' "$T/warm.err"
timings_within_total () {
  jq -e '.timings | (.setup + .initramfs + .boot + .check) <= .total + 0.01 and .boot > 0' \
    "$1" >/dev/null
}
check "report.json has the timings, each phase within the total" \
  timings_within_total "$T/warm/report.json"
"$WTRACK" check "$T/warm" --json "$T/warm-again.json" >/dev/null 2>&1 || true
check "... and otherwise is wtrack check's report" \
  cmp -s <(jq -S 'del(.timings)' "$T/warm/report.json") <(jq -S . "$T/warm-again.json")

wtrack_run nocache "${run_args[@]}" --seed 4 --cache "$T/cache-unused" --no-cache
check "--no-cache runs and leaves no cache" test "$run_status" = 0 -a ! -e "$T/cache-unused"
done_testing
