#!/bin/bash
# A kernel with a lost-write bug of its own, found by an ops campaign:
# tests/patches/ext4-range-op-cleans-next-page.patch (doc/ops.md "A
# patched kernel") marks clean, without writing it, the dirty page just past
# an ext4 PUNCH_HOLE or ZERO_RANGE. The one patched kernel make check
# compiles: scripts/build-kernel with that patch and a patch carrying a
# token of this run (so the compile really happens, through ccache, from
# the tree of the test kernel; its cache entry is removed afterwards).
#  - the patched variant builds, differs from the test kernel, and came
#    from ccache (its rebuild time in a diag line);
#  - an ops campaign of at most 20 seeds on build:PATCH+PATCH with
#    --until-fail finds damage;
#  - the damaged cell's report names, as the last op of a lost run, an op
#    that put bytes into a page (a write, or the zeroing of a partial
#    block) which a later fzero or fpunch on that file ended just before
#    (and so cleaned), and the channel holds that op's MARK;
#  - the test kernel, unpatched, is clean on the same seed;
#  - three ops with no fsync (ext4 delays the page's allocation): the page
#    the patch cleaned stays DELALLOC after the final fsync, and check says
#    it lost (no disk sector), not "not checkable"; the test kernel is clean
#    on the same ops.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools make gcc flex bison bc patch ccache jq python3
source=/usr/src/linux-source-6.1.tar.xz
[ -f "$source" ] || skip_all "kernel source missing (install linux-source-6.1): $source"
plan 16

bug=$TOP/tests/patches/ext4-range-op-cleans-next-page.patch
cache=${XDG_CACHE_HOME:-$HOME/.cache}/wtrack
# the options of every run here (doc/ops.md "A patched kernel"): mapped
# stores past EOF left out, as Debian's 6.1 itself exposes them (doc/ops.md
# "Found so far"), and collapse and insert, which move a lost page's bytes
# and drop the page, so that the report names them as its last op instead
weights=mwrite_eof=0:fcollapse=0:finsert=0
ops_opts=(--workload ops --ops 300 --files 2 --size 256K --op-weights "$weights")

# ---- the patched kernel: the test kernel's tree, through ccache ---------
stock=$("$TOP/scripts/build-kernel" 2>"$T/stock.err") || stock=""
if [ -z "$stock" ] || [ ! -s "$stock" ]; then
  not_ok "build-kernel prints the test kernel"
  diag_file "$T/stock.err" 30
  bail_out
fi
ok "build-kernel prints the test kernel: $stock"

token="$$-$(date +%s%N)"
cat >"$T/token.patch" <<EOF
--- a/fs/ext4/fsync.c
+++ b/fs/ext4/fsync.c
@@ -137,6 +137,7 @@
 		return -EIO;
 
 	ASSERT(ext4_journal_current_handle() == NULL);
+	pr_debug("wtrack build-kernel test $token\\n");
 
 	trace_ext4_sync_file_enter(file, datasync);
 
EOF
ccache_count () {
  CCACHE_DIR=$cache/ccache ccache --print-stats 2>/dev/null |
    awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) print 0 }'
}
hits0=$(( $(ccache_count direct_cache_hit) + $(ccache_count preprocessed_cache_hit) ))
miss0=$(ccache_count cache_miss)
start=$SECONDS
patched=$("$TOP/scripts/build-kernel" --patch "$bug" --patch "$T/token.patch" 2>"$T/patched.err") ||
  patched=""
secs=$((SECONDS - start))
hits=$(( $(ccache_count direct_cache_hit) + $(ccache_count preprocessed_cache_hit) - hits0 ))
misses=$(( $(ccache_count cache_miss) - miss0 ))
diag "patched kernel rebuilt in ${secs} s: ccache $hits hits, $misses misses (load $(cut -d' ' -f1-3 /proc/loadavg))"
# its folder leaves the build cache at the end: a token's kernel is never asked for again
[ -n "$patched" ] && on_exit rm -rf "$(dirname "$patched")"
if [ -n "$patched" ] && [ -s "$patched" ] && ! cmp -s "$patched" "$stock"; then
  ok "the patched variant builds (${secs} s) and differs from the test kernel"
else
  not_ok "the patched variant builds and differs from the test kernel"
  diag_file "$T/patched.err" 30
  bail_out
fi
# other builds may share the cache at the same time: only a floor is sure
check "the variant came from ccache: $hits hits, $misses misses (at least 90% hits)" \
  test "$hits" -gt 0 -a $((hits * 100)) -ge $(( (hits + misses) * 90 ))

# ---- the campaign: 20 seeds at most, stopped at the first damage -------
cat >"$T/c.ini" <<EOF
[campaign]
kernels = build:$bug+$T/token.patch
fs = ext4
workloads = ops
seeds = 1-20
ops = 300
files = 2
size = 256K
op-weights = $weights
accel = tcg
no-cold = true
EOF
out=$T/camp
rc=0
start=$SECONDS
"$TOP/scripts/wtrack-campaign" run "$T/c.ini" --out "$out" --jobs 2 --until-fail \
  >"$T/camp.out" 2>"$T/camp.err" || rc=$?
cells=("$out"/cells/*/cell.ini)
[ -f "${cells[0]}" ] || cells=()
ran=${#cells[@]}
diag "campaign: exit $rc in $((SECONDS - start)) s, $ran of 20 cells ran"
check "the campaign on build:PATCH+PATCH finds damage (exit 1) and stops early ($ran cells ran)" \
  [ "$rc" = 1 -a "$ran" -ge 1 -a "$ran" -lt 20 ]
[ "$rc" = 1 ] || diag_file "$T/camp.err" 30
check "the campaign ran the patched kernel: its cells' kernel is the variant just built" \
  grep -qxF "kernel_path=$patched" "${cells[@]:-/dev/null}"

# the damaged cell of the lowest seed
cell=$(jq -r '[.cells[] | select(.status == "damaged")] | sort_by(.seed) | .[0].dir // empty' \
  "$out/summary.json" 2>/dev/null || true)
seed=$(jq -r '[.cells[] | select(.status == "damaged")] | sort_by(.seed) | .[0].seed // empty' \
  "$out/summary.json" 2>/dev/null || true)
[ -n "$cell" ] && cell=$out/$cell
if [ -z "$cell" ] || [ ! -f "$cell/report.json" ]; then
  not_ok "a damaged cell with its report"
  bail_out
fi
ok "seed $seed is damaged: $(grep '^verdict:' "$cell/report.txt")"

# Each lost run of the report: its last op, that op's MARK on the channel,
# and whether a later fzero or fpunch on that file ended in the page just
# before the run's (the patch's path: that op cleaned the run's page).
"$WTRACK" dump --channel "$cell/channel.bin" >"$T/channel.txt" 2>&1 || true
python3 - "$cell/report.json" "$T/channel.txt" >"$T/named.txt" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
marks = {}
for line in open(sys.argv[2]):
    m = re.search(r' MARK .*"op (\d+) (.*)"$', line)
    if m:
        marks[int(m.group(1))] = m.group(2)
page = 4096
for f in report["files"]:
    name = f["path"].rsplit("/", 1)[-1]
    for r in f["runs"]:
        if r["class"] != "lost" or not r["op"]:
            continue
        n = r["op"]["number"]
        run_page = r["file_offset"] // page
        mark = marks.get(n)
        cleaner = None
        for m in sorted(k for k in marks if k > n):
            w = marks[m].split()
            if w[0] == name and w[1] in ("fzero", "fpunch"):
                off, length = int(w[-2], 0), int(w[-1], 0)
                if (off + length + page - 1) // page == run_page:
                    cleaner = m
                    break
        same_file = bool(mark) and mark.split()[0] == name
        print("run %s page %d op %d %s mark=%r cleaner=%s" % (
            f["path"], run_page, n, r["op"]["kind"], mark,
            "op %d %s" % (cleaner, marks[cleaner]) if cleaner else "none"),
            "PATH" if same_file and cleaner else "OTHER")
PY
sed 's/^/#   /' "$T/named.txt" >&2
hit=$(grep -m 1 ' PATH$' "$T/named.txt" || true)
op=$(sed -n 's/^run [^ ]* page [0-9]* op \([0-9]*\) .*/\1/p' <<<"$hit")
check "a lost run's last op put bytes into a page a later fzero/fpunch cleaned, its MARK on the channel" \
  [ -n "$hit" ]
check "report.txt names that op as the run's last op (last op $op)" \
  grep -Eq "^  lost .*; last op $op [a-z-]+ [0-9]+\+[0-9]+" "$cell/report.txt"

# ---- the test kernel on the same seed: clean ---------------------------
run_status=none
if [ -n "$seed" ]; then
  wtrack_run stock --kernel "$stock" "${ops_opts[@]}" --seed "$seed"
fi
check "the unpatched test kernel on seed $seed: exit 0, clean" \
  [ -n "$seed" -a "$run_status" = 0 ]
check "... and it ran the same ops as the damaged cell" cmp -s "$cell/ops.txt" "$T/stock/ops.txt"

# ---- a delayed allocation never written --------------------------------
# No fsync before the fzero: page 1 of f1 is dirty and unallocated when the
# patch marks it clean, so it is never written and FIEMAP still says
# DELALLOC after the workload's final fsync.
printf '%s\n' 'f1 pwrite 0x0 0x3000' 'f1 pwrite 0x1000 0x800' 'f1 fzero -k 0x0 0x1000' \
  >"$T/delalloc.ops"
delalloc_opts=(--workload ops --files 2 --size 256K --ops-file "$T/delalloc.ops")
wtrack_run delalloc --kernel "$patched" "${delalloc_opts[@]}"
check "delalloc: the patched kernel's lost page is damage (exit 1), 8 sectors lost" \
  test "$run_status $(grep '^verdict:' "$T/delalloc/report.txt" 2>/dev/null)" \
    = "1 verdict: damaged: 8 bad sectors, lost 8"
check "delalloc: the run names file bytes 4096+4096 with no disk sector: a delayed allocation never written" \
  grep -q '^  lost        file bytes 4096+4096 (sectors 8-15); .*; no disk sector: delayed allocation never written' \
  "$T/delalloc/report.txt"
# The same run traced (wtrack-run --trace): the kernel's own account of the
# lost page, and the loss itself reported as without the trace.
wtrack_run delalloc-trace --trace --kernel "$patched" "${delalloc_opts[@]}"
diag_file "$T/delalloc-trace/report.txt" 40
check "delalloc --trace: the same verdict, and the same lost run" \
  test "$run_status|$(grep -e '^verdict:' -e '^  lost ' "$T/delalloc-trace/report.txt" 2>/dev/null | sed 's/ t=[^ ]*//g')" \
    = "1|$(grep -e '^verdict:' -e '^  lost ' "$T/delalloc/report.txt" | sed 's/ t=[^ ]*//g')"
check "delalloc --trace: the finding says the page was dirtied, zero-ranged next to it, covered by a writeback, with no disk block" \
  grep -Eq 'page 1 of /data/f1: marked dirty at .*ext4_zero_range on or next to it .*a writeback of the file covered it at .*but the page has no disk block' \
  "$T/delalloc-trace/report.txt"
check "delalloc --trace: the events are listed under it (ext4_zero_range, writepages)" \
  test "$(grep -c -e 'ext4_zero_range' -e 'ext4_writepages' "$T/delalloc-trace/report.txt")" -ge 3
wtrack_run delalloc-stock --kernel "$stock" "${delalloc_opts[@]}"
check "delalloc: the unpatched test kernel on the same ops: exit 0, clean" \
  [ "$run_status" = 0 ]
done_testing
