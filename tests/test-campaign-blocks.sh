#!/bin/bash
# Block sizes as a campaign axis, no boot: per-fs options (KEY.FS) and a
# variant's own fs list in `wtrack campaign expand` (which cells, with
# which --mkfs-opts; bad keys refused, named).
. "$(dirname "$0")/lib.sh"
require_built "$WTRACK"
plan 9

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
done_testing
