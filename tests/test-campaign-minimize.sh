#!/bin/bash
# scripts/wtrack-campaign run --minimize: a campaign of the ops workload on
# Debian 12's kernel (6.1, which exposes bytes stored through a mapping
# past EOF once the file grows: doc/ops.md "Found so far") with a 5-op
# list, two seeds; once the cells are done the first damaged cell of the
# row is minimized (with --verify) into its minimal/, and the campaign's
# minimized.txt and summary.txt name it with its verdict.
. "$(dirname "$0")/lib.sh"
require_tools qemu-system-x86_64 nbdkit mkfs.ext4 jq python3 cc
require_built "$WTRACK" "$PLUGIN" "$GUEST"
export PYTHONDONTWRITEBYTECODE=1
plan 6

cat >"$T/list.txt" <<'OPS'
f2 pwrite 0x1000 0x800
f1 truncate 0x22061
f1 mwrite -e 0x2207c 0xf84
f2 fsync
f1 pwrite 0x23000 0x1000
OPS
cat >"$T/c.ini" <<INI
[campaign]
kernels = debian:bookworm
fs = ext4
workloads = ops
seeds = 1-2
files = 2
size = 256K
ops-file = $T/list.txt
accel = tcg
no-cold = true
INI
st=0
nice "$TOP/scripts/wtrack-campaign" run "$T/c.ini" --out "$T/c" --jobs 2 --minimize \
  >"$T/c.out" 2>"$T/c.err" || st=$?
diag "campaign: exit $st"
check "the campaign finds damage (exit 1; exit $st)" [ "$st" = 1 ]
first=$(cut -f1 "$T/c/plan.tsv" | head -n 1)
M=$T/c/cells/$first/minimal
check "the first damaged cell ($first) is minimized: 1-minimal" \
  grep -q '^verdict: 1-minimal: [1-3] of 5 ops still lose data' "$M/summary.txt"
check "only one cell of the row is minimized" \
  [ "$(find "$T/c/cells" -maxdepth 2 -name minimal | wc -l)" = 1 ]
check "minimized.txt names the row, its minimal/ and the verdict" \
  grep -q "^  debian:bookworm ext4 -: cells/$first/minimal/ (exit 0): 1-minimal: " "$T/c/minimized.txt"
check "... and what --verify found" \
  grep -Eq '^    reproduces without wtrack: [1-9][0-9]* bad sectors' "$T/c/minimized.txt"
check "summary.txt ends with it" \
  sh -c "tail -n 3 '$T/c/summary.txt' | grep -q 'cells/$first/minimal/'"
sed 's/^/# /' "$T/c/minimized.txt"
done_testing
