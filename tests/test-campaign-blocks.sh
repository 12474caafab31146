#!/bin/bash
# Block sizes as a campaign axis, no boot: per-fs options (KEY.FS) and a
# variant's own fs list in `wtrack campaign expand` (which cells, with
# which --mkfs-opts; bad keys refused, named); the block size cells report
# (cell.ini block_size=, from report.json) in summary.json's cells and
# grid, summary.txt's column labels, results.xml and summary.html (in
# Chromium); a cell without one (an older run) gives null, never an error.
. "$(dirname "$0")/lib.sh"
require_tools /usr/bin/python3 jq chromium timeout
require_built "$WTRACK"
plan 19

cat >"$T/blocks.campaign" <<'INI'
[campaign]
kernels = debian:trixie
fs = ext4 xfs btrfs
workloads = ops
seeds = 1-2
mkfs-opts = -O ^has_journal
mkfs-opts.btrfs = --sectorsize 4096
[4k]
mkfs-opts.ext4 = -b 4096
mkfs-opts.xfs = -b size=4096
[1k]
fs = ext4 xfs
mkfs-opts.ext4 = -b 1024
mkfs-opts.xfs = -b size=1024
INI
"$WTRACK" campaign expand "$T/blocks.campaign" --plan "$T/plan.tsv" >/dev/null
# mkfs ID: the --mkfs-opts a cell of plan.tsv runs with ("" for none)
mkfs () {
  awk -F'\t' -v id="$1" '$1 == id { for (i = 7; i < NF; i++) if ($i == "--mkfs-opts") print $(i + 1) }' \
    "$T/plan.tsv"
}
check "a variant with fs = ext4 xfs has no btrfs cells: 2 x 3 + 2 x 2 = 10 cells" \
  test "$(wc -l <"$T/plan.tsv") $(grep -c '^trixie\.btrfs\.1k' "$T/plan.tsv")" = "10 0"
check "mkfs-opts.ext4 of a variant replaces the campaign's mkfs-opts for ext4 cells" \
  test "$(mkfs trixie.ext4.1k.ops.s1)|$(mkfs trixie.ext4.4k.ops.s2)" = "-b 1024|-b 4096"
check "mkfs-opts.xfs reaches xfs cells only" \
  test "$(mkfs trixie.xfs.1k.ops.s1)|$(grep -c 'size=1024' "$T/plan.tsv")" = "-b size=1024|2"
check "the campaign's mkfs-opts.btrfs outranks its mkfs-opts for btrfs; one --mkfs-opts a cell" \
  test "$(mkfs trixie.btrfs.4k.ops.s1)|$(awk -F'\t' '{ n = 0; for (i = 7; i <= NF; i++) n += $i == "--mkfs-opts"; print n }' "$T/plan.tsv" | sort -u)" \
    = "--sectorsize 4096|1"
# A variant without a key of its fs keeps the campaign's plain one.
printf '[campaign]\nfs = ext4 xfs\nmkfs-opts = -q\n[v]\nmkfs-opts.xfs = -b size=2048\n' >"$T/plain.campaign"
"$WTRACK" campaign expand "$T/plain.campaign" --plan "$T/plan.tsv" >/dev/null
check "a variant's mkfs-opts.xfs leaves the campaign's mkfs-opts to ext4" \
  test "$(mkfs bookworm.ext4.v.linus2006.s1)|$(mkfs bookworm.xfs.v.linus2006.s1)" = "-q|-b size=2048"
"$WTRACK" campaign expand --fs 'ext4 xfs' --set 'mkfs-opts.xfs=-b size=1024' --plan "$T/plan.tsv" >/dev/null
check "--set KEY.FS=VALUE works as in the file" \
  test "$(mkfs bookworm.ext4.linus2006.s1)|$(mkfs bookworm.xfs.linus2006.s1)" = "|-b size=1024"
# bad keys
bad () { # bad WHAT FILE-TEXT: expand refuses with exit 2 and a message matching WHAT
  printf '%b' "$2" >"$T/bad.campaign"
  local rc=0
  "$WTRACK" campaign expand "$T/bad.campaign" >/dev/null 2>"$T/bad.err" || rc=$?
  if [ "$rc" != 2 ] || ! grep -q -- "$1" "$T/bad.err"; then
    diag_file "$T/bad.err"
    return 1
  fi
}
check "KEY.FS with an unknown fs is refused, named" \
  bad 'mkfs-opts.zfs: unknown fs' '[campaign]\nmkfs-opts.zfs = -b 1024\n'
check "a variant's fs with an unknown fs is refused, named" \
  bad '\[v\]: fs: unknown value: zfs' '[campaign]\n[v]\nfs = ext4 zfs\n'
check "variants whose fs are none of the campaign's: no cell, refused" \
  bad 'no cell' '[campaign]\nfs = btrfs\n[v]\nfs = ext4\n'

# README's example campaign (the indented block after "`blocks.campaign`:")
awk '/`blocks.campaign`:/ { on = 1; next } on && /^    / { print substr($0, 5); seen = 1; next }
     on && seen { exit }' "$TOP/README.md" >"$T/readme.campaign"
"$WTRACK" campaign expand "$T/readme.campaign" --plan "$T/plan.tsv" >/dev/null
check "README's blocks.campaign: 2 kernels x (3 fs at 4k + 2 at 1k) x 10 seeds, 1k cells with -b 1024 / -b size=1024" \
  test "$(wc -l <"$T/plan.tsv") $(grep -c '^trixie\.btrfs\.1k' "$T/plan.tsv") $(mkfs bookworm.ext4.1k.ops.s7)|$(mkfs trixie.xfs.1k.ops.s10)" \
    = "100 0 -b 1024|-b size=1024"

# ---- the grid: block sizes the cells reported ---------------------------
D=$T/campaign
mkdir -p "$D"
"$WTRACK" campaign expand "$T/blocks.campaign" --seeds 1-2 --plan "$D/plan.tsv" >/dev/null
# cell_ini ID LINES...: cells/ID/cell.ini for the plan's cell ID, clean, and LINES
cell_ini () {
  local id=$1 args
  shift
  args=$(awk -F'\t' -v id="$id" '$1 == id' "$D/plan.tsv" | cut -f7- | sed 's/\t/\\t/g')
  mkdir -p "$D/cells/$id"
  printf '%s\n' '[cell]' "id=$id" kernel=debian:trixie "args=$args" status=clean exit=0 seconds=10 \
    bad_sectors=0 page_size=4096 "$@" >"$D/cells/$id/cell.ini"
}
for s in 1 2; do
  cell_ini "trixie.ext4.4k.ops.s$s" block_size=4096
  cell_ini "trixie.ext4.1k.ops.s$s" block_size=1024
  cell_ini "trixie.xfs.1k.ops.s$s" block_size=1024
done
cell_ini trixie.btrfs.4k.ops.s1 block_size=4096
# cells of one column that differ (btrfs-progs before 6.7 made 64 KiB
# sectors on 64 KiB pages: a column over two architectures can)
cell_ini trixie.btrfs.4k.ops.s2 block_size=65536
cell_ini trixie.xfs.4k.ops.s1 block_size=4096
cell_ini trixie.xfs.4k.ops.s2          # an older run: no block size
"$WTRACK" campaign collect -q "$D"; rc=$?
check "collect: exit 0 (every cell clean; one without a block size)" test "$rc" = 0
check "summary.json: each cell's block_size, null for the one that reported none" \
  test "$(jq -r '[.cells[] | "\(.id)=\(.block_size)"] | join(" ")' "$D/summary.json")" = \
    "trixie.ext4.4k.ops.s1=4096 trixie.ext4.4k.ops.s2=4096 trixie.ext4.1k.ops.s1=1024 trixie.ext4.1k.ops.s2=1024 trixie.xfs.4k.ops.s1=4096 trixie.xfs.4k.ops.s2=null trixie.xfs.1k.ops.s1=1024 trixie.xfs.1k.ops.s2=1024 trixie.btrfs.4k.ops.s1=4096 trixie.btrfs.4k.ops.s2=65536"
check "summary.json: each grid entry's block_size (the one its cells reported; null when they differ)" \
  test "$(jq -r '[.grid[] | "\(.fs)/\(.variant)=\(.block_size)"] | join(" ")' "$D/summary.json")" = \
    "ext4/4k=4096 ext4/1k=1024 xfs/4k=4096 xfs/1k=1024 btrfs/4k=null"
check "summary.txt: the columns say bs=N" \
  grep -Eq '^kernel +ext4/4k ops bs=4096 +ext4/1k ops bs=1024 +xfs/4k ops bs=4096 +xfs/1k ops bs=1024 +btrfs/4k ops bs=4096/65536$' "$D/summary.txt"
check "results.xml: a block_size property where the cell reported one (9 of 10)" \
  test "$(grep -c '<property name="block_size" value="1024"/>' "$D/results.xml") $(grep -c '<property name="block_size"' "$D/results.xml")" = "4 9"
agree () { "$TOP/tests/tools/campaign-agree.py" "$D" >/dev/null; }
check "summary.txt, summary.json, results.xml and summary.html agree" agree
DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --disable-gpu --no-sandbox \
  --no-first-run --disable-extensions --enable-logging=stderr --v=0 --user-data-dir="$T/chrome" \
  --dump-dom "file://$D/summary.html" >"$T/summary.dom" 2>"$T/chrome.err" || true
check "summary.html renders in Chromium without a console message" \
  eval "grep -q 'data-rendered=\"yes\"' '$T/summary.dom' && ! grep -hE ':CONSOLE|Uncaught' '$T/chrome.err' >&2"
check "summary.html: the column heads say the block size" \
  test "$(grep -o '<th>[a-z0-9]*/[0-9]k ops, [0-9./ KiB]* blocks</th>' "$T/summary.dom" | tr '\n' ' ')" = \
    "<th>ext4/4k ops, 4.0 KiB blocks</th> <th>ext4/1k ops, 1.0 KiB blocks</th> <th>xfs/4k ops, 4.0 KiB blocks</th> <th>xfs/1k ops, 1.0 KiB blocks</th> <th>btrfs/4k ops, 4.0 KiB/64 KiB blocks</th> "
cell_ini trixie.xfs.4k.ops.s2 block_size=4k
"$WTRACK" campaign collect "$D" >"$T/bad-bs.txt"; rc=$?
check "a cell.ini whose block_size is no number: that cell is an error, named (exit 2)" \
  test "$rc" = 2 -a -n "$(grep 'trixie.xfs.4k.ops.s2: cell.ini: block_size: not a number: 4k' "$T/bad-bs.txt")"
done_testing
