#!/bin/bash
# repro.c, as scripts/wtrack-minimize generates it, here on the host (no
# boot): it builds with cc -static and no warning; its bytes are the ops
# workload's (guest/rng.c's, compared byte for byte); run on tmpfs and on
# ext4 on a loop file it prints "REPRO: 0 bad sectors" for lists of every op
# kind and for subsets of them (every subset runs against its model); a
# model made wrong on purpose is reported sector by sector (exit 1); an op
# it cannot express is refused by name; and the mapped-store finding
# (doc/ops.md "Found so far") shows in repro.c exactly when
# tests/tools/eof-mmap-dio shows it on this kernel.
. "$(dirname "$0")/lib.sh"
require_tools python3 cc mkfs.ext4 losetup
export PYTHONDONTWRITEBYTECODE=1
plan 14
[ "$(id -u)" = 0 ] || skip_all "needs root (tmpfs and loop mounts)"

# reproducer KIND NAME LINES...: $T/NAME.c (KIND c: repro.c) or $T/NAME.sh
# (KIND sh: repro.sh) from the ops lines (files 2, 256K, seed 7), by
# wtrack-minimize's own generator; prints its error instead when it refuses
reproducer () {
  local kind=$1 name=$2; shift 2
  python3 - "$TOP/scripts/wtrack-minimize" "$kind" "$T/$name.$kind" "$@" <<'PY'
import importlib.machinery, importlib.util, sys, types
loader = importlib.machinery.SourceFileLoader("wtm", sys.argv[1])
spec = importlib.util.spec_from_loader("wtm", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
run = types.SimpleNamespace(files=2, size=256 << 10, seed=7, guest_kernel="the host's",
                            run_args=["--fs", "ext4"], page=4096)
make = m.repro_c if sys.argv[2] == "c" else m.repro_sh
try:
    text = make(sys.argv[4:], run, "a test list")
except m.ReproError as e:
    print(e)
    sys.exit(1)
open(sys.argv[3], "w").write(text)
PY
}
gen () { reproducer c "$@"; }
gensh () { reproducer sh "$@"; }

# a list of every op kind, drawn as the generator draws them (near EOF,
# on page edges), without mapped stores past EOF (a finding, below)
python3 - >"$T/all.txt" <<'PY'
import random
r = random.Random(3)
kinds = ["pwrite", "write", "dwrite", "mwrite", "msync", "msync -a", "munmap", "truncate",
         "falloc", "falloc -k", "fpunch", "fzero", "fzero -k", "fcollapse", "finsert",
         "copy_range", "fsync", "fdatasync", "sync_range", "fadvise", "syncfs", "drop_caches"]
limit, page = 256 << 10, 4096
size = {1: 0, 2: 0}
for i in range(300):
    k = kinds[i % len(kinds)] if i < len(kinds) else r.choice(kinds)
    f = r.choice([1, 2])
    off = r.choice([size[f], size[f] // page * page, r.randrange(0, limit // 2)])
    ln = r.choice([r.randint(1, 512), r.randint(1, 2 * page), page * r.randint(1, 4)])
    if k == "dwrite" or k in ("fcollapse", "finsert"):
        off, ln = off // page * page, page * r.randint(1, 3)
    off, ln = min(off, limit - 6 * page), ln
    if k in ("msync", "msync -a", "munmap", "fsync", "fdatasync", "syncfs", "drop_caches"):
        print(f"f{f} {k}")
    elif k == "truncate":
        print(f"f{f} truncate {hex(r.randrange(0, limit))}")
    elif k == "copy_range":
        print(f"f{f} copy_range f{3 - f} {hex(r.randrange(0, limit // 2))} {hex(off)} {hex(ln)}")
    else:
        print(f"f{f} {k} {hex(off)} {hex(ln)}")
PY
mapfile -t all <"$T/all.txt"
gen all "${all[@]}" >"$T/gen.err" 2>&1
check "repro.c of 300 ops of every kind is generated" [ -s "$T/all.c" ]
check "it builds with cc -static -Wall -Wextra -Werror" \
  cc -static -O2 -Wall -Wextra -Werror -o "$T/all" "$T/all.c"

# the bytes: repro.c's fill against guest/rng.c's, for many keys and ranges
cat >"$T/bytes.c" <<'EOF2'
#define main repro_main
#include "all.c"
#undef main
uint64_t wtg_content_key (uint64_t seed, uint32_t file_id, uint64_t generation);
void wtg_fill_keyed (unsigned char *dst, uint64_t file_off, size_t len, uint64_t key);
int
main (void)
{
  static unsigned char a[9000], b[9000];
  for (uint64_t n = 1; n < 400; n++) {
    uint64_t off = mix64 (n) % 200000, len = 1 + mix64 (n + 7) % 8999;
    uint32_t file = 1 + (uint32_t) (n % 2);
    fill_keyed (a, off, len, content_key (file, n));
    wtg_fill_keyed (b, off, len, wtg_content_key (SEED, file, n));
    if (memcmp (a, b, len))
      return 1;
  }
  return 0;
}
EOF2
check "its bytes are the ops workload's (guest/rng.c), 400 keyed ranges" \
  sh -c "cc -O2 -I '$T' -I '$TOP/guest' -I '$TOP/common' -o '$T/bytes' '$T/bytes.c' '$TOP/guest/rng.c' && '$T/bytes'"

# where it runs: tmpfs, and ext4 on a loop file
mkdir -p "$T/tmpfs" "$T/ext4"
mount -t tmpfs -o size=64m tmpfs "$T/tmpfs" && on_exit umount "$T/tmpfs"
truncate -s 256M "$T/ext4.img"
mkfs.ext4 -q -F "$T/ext4.img"
mount -o loop "$T/ext4.img" "$T/ext4" && on_exit umount "$T/ext4"
for fs in tmpfs ext4; do
  mkdir -p "$T/$fs/all"
  "$T/all" "$T/$fs/all" >"$T/all.$fs.out" 2>&1; st=$?
  check "$fs: 300 ops of every kind: REPRO: 0 bad sectors, exit 0 (exit $st)" \
    grep -qx 'REPRO: 0 bad sectors' "$T/all.$fs.out"
  diag "$fs: $(grep -c refused "$T/all.$fs.out") ops refused"
done

# repro.sh: the same list as xfs_io commands, on ext4, less the ops
# repro.c saw refused there (repro.sh takes every op as succeeding)
mapfile -t accepted < <(awk 'NR == FNR { if ($1 == "op" && $3 == "refused") gone[$2] = 1; next }
                             !(FNR in gone)' "$T/all.ext4.out" "$T/all.txt")
diag "repro.sh: ${#accepted[@]} ops"
gensh all "${accepted[@]}"
mkdir -p "$T/ext4/sh"
bash "$T/all.sh" "$T/ext4/sh" >"$T/all.sh.out" 2>&1; st=$?
check "repro.sh of the 300 ops on ext4: REPRO: 0 bad sectors, exit 0 (exit $st)" \
  sh -c "[ $st = 0 ] && grep -qx 'REPRO: 0 bad sectors' '$T/all.sh.out'"

# subsets: every one runs, against its own model
bad=""
for s in 1 2 3 4 5 6 7 8; do
  mapfile -t sub < <(python3 -c "
import random, sys
r = random.Random($s)
lines = open('$T/all.txt').read().split('\n')[:-1]
keep = sorted(r.sample(range(len(lines)), r.randint(1, len(lines))))
print('\n'.join(lines[i] for i in keep))")
  gen sub$s "${sub[@]}" >/dev/null && cc -static -O2 -o "$T/sub$s" "$T/sub$s.c" || { bad="$bad $s(build)"; continue; }
  mkdir -p "$T/ext4/sub$s"
  "$T/sub$s" "$T/ext4/sub$s" >"$T/sub$s.out" 2>&1
  grep -qx 'REPRO: 0 bad sectors' "$T/sub$s.out" || bad="$bad $s"
done
check "8 random subsets of the list: each REPRO: 0 on ext4${bad:+ (not:$bad)}" [ -z "$bad" ]

# a wrong model is seen: the writes' bytes left out of what the files must hold
sed 's|memcpy (f->want + op->off, data, end - op->off);|(void) data;|' "$T/all.c" >"$T/wrong.c"
cc -static -O2 -o "$T/wrong" "$T/wrong.c"
mkdir -p "$T/ext4/wrong"
"$T/wrong" "$T/ext4/wrong" >"$T/wrong.out" 2>&1; st=$?
check "a model without the writes: exit 1 (exit $st)" [ "$st" = 1 ]
check "... REPRO: N > 0, one line a wrong sector with got and want" \
  sh -c "grep -Eq '^REPRO: [1-9][0-9]* bad sectors$' '$T/wrong.out' &&
         grep -Eq '^f[12] sector [0-9]+: first wrong byte [0-9]+: got 0x[0-9a-f]{2}, want 0x00$' '$T/wrong.out'"
n_lines=$(grep -c ' sector .*first wrong byte' "$T/wrong.out")
check "... as many lines as bad sectors ($n_lines)" \
  grep -qx "REPRO: $n_lines bad sectors" "$T/wrong.out"

# an op it cannot express: refused by name, nothing written
out=$(gen refused "f1 pwrite 0 0x10" "f1 pwritev 0x0 0x10" 2>&1)
check "an op it cannot express is refused: $out" \
  sh -c "echo '$out' | grep -q 'op 2 (f1 pwritev 0x0 0x10): not an op the reproducers can express (they cover pwrite, ' && [ ! -e '$T/refused.c' ]"

# the finding: a mapped store past EOF, then an O_DIRECT write growing the
# file; repro.c reports it when eof-mmap-dio (its O_DIRECT way) does
gen eof "f1 truncate 0x22061" "f1 mwrite -e 0x2207c 0xf84" "f1 dwrite 0x23000 0x1000"
cc -static -O2 -o "$T/eof" "$T/eof.c"
mkdir -p "$T/ext4/eof" "$T/ext4/tool"
"$T/eof" "$T/ext4/eof" >"$T/eof.out" 2>&1; st=$?
"$TOP/tests/tools/eof-mmap-dio" "$T/ext4/tool" >"$T/tool.out" 2>&1 || true
diag "eof-mmap-dio: $(grep 'O_DIRECT' "$T/tool.out")"
if grep -q '^O_DIRECT pwrite .*0x00, after.*0x00 (want' "$T/tool.out"; then
  check "this kernel keeps the bytes out (eof-mmap-dio): repro.c says 0 (exit $st)" \
    grep -qx 'REPRO: 0 bad sectors' "$T/eof.out"
else
  check "this kernel shows the bytes (eof-mmap-dio): repro.c says N > 0, exit 1 (exit $st)" \
    sh -c "[ $st = 1 ] && grep -Eq '^REPRO: [1-9][0-9]* bad sectors$' '$T/eof.out'"
fi
diag "$(tail -n 3 "$T/eof.out" | tr '\n' '|')"
gensh eof "f1 truncate 0x22061" "f1 mwrite -e 0x2207c 0xf84" "f1 dwrite 0x23000 0x1000"
mkdir -p "$T/ext4/eofsh"
bash "$T/eof.sh" "$T/ext4/eofsh" >"$T/eofsh.out" 2>&1; st_sh=$?
check "repro.sh agrees with repro.c on the finding (exit $st_sh, repro.c $st)" \
  sh -c "[ $st_sh = $st ] && [ \"\$(grep -c ' sector ' '$T/eofsh.out')\" = \"\$(grep -c ' sector ' '$T/eof.out')\" ]"
diag "repro.sh: $(tail -n 3 "$T/eofsh.out" | tr '\n' '|')"
check "the finding's repro.c names each op in a comment" \
  sh -c "grep -c '/\\* op [123]: f1: ' '$T/eof.c' | grep -qx 3"
done_testing
