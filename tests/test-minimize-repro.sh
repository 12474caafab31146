#!/bin/bash
# repro.c, as scripts/wtrack-minimize generates it, here on the host (no
# boot): it builds with cc -static and no warning; its bytes are the ops
# workload's (guest/rng.c's, compared byte for byte); run on tmpfs, and on
# ext4, xfs (reflink on) and btrfs on loop files, it prints "REPRO: 0 bad
# sectors" for lists of every op kind and for subsets of them (every subset
# runs against its model), with reflinks and dedupes that ran on xfs and
# btrfs; repro.sh agrees on ext4 and xfs; pwritev, dwrite -s, reflink and
# dedupe make the workload's calls (logged through ld --wrap), and a
# dedupe of ranges ending at EOF is compared as the kernel compares it; a
# model made wrong on purpose is reported sector by sector (exit 1); an op
# it cannot express is refused by name; and the mapped-store finding
# (doc/ops.md "Found so far") shows in repro.c exactly when
# tests/tools/eof-mmap-dio shows it on this kernel.
. "$(dirname "$0")/lib.sh"
require_tools python3 cc mkfs.ext4 mkfs.xfs mkfs.btrfs xfs_io dd losetup
export PYTHONDONTWRITEBYTECODE=1
plan 22
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
# on page edges), without mapped stores past EOF (a finding, below);
# reflink and dedupe mostly where the kernel takes them (page-aligned
# ranges below the source's EOF or ending there, a dedupe often of the
# last reflink's ranges), the sizes followed roughly (refusals aside)
python3 - >"$T/all.txt" <<'PY'
import random
r = random.Random(3)
kinds = ["pwrite", "write", "dwrite", "mwrite", "msync", "msync -a", "munmap", "truncate",
         "falloc", "falloc -k", "fpunch", "fzero", "fzero -k", "fcollapse", "finsert",
         "copy_range", "fsync", "fdatasync", "sync_range", "fadvise", "syncfs", "drop_caches",
         "pwritev", "dwrite -s", "reflink", "dedupe", "reflink", "dedupe"]
limit, page = 256 << 10, 4096
size = {1: 0, 2: 0}
est = {1: 0, 2: 0}          # the files' sizes, roughly: where a reflink finds data
dpos = {1: 0, 2: 0}         # where the last dwrite -s on the file ended
share = None                # the last reflink's ranges


def up(n):
    return -(-n // page) * page


def remap(k, f):
    """reflink or dedupe: its file, source, ranges and length"""
    global share
    if k == "dedupe" and share and r.randrange(3):
        return share
    s = r.choice([1, 2])
    pages = est[s] // page
    if k == "reflink" and est[s] % page and r.randrange(3) == 0:   # to the source's EOF
        src = page * r.randrange(pages + 1)
        ln = est[s] - src
        off = up(max(est[f] - ln, 0)) + page * r.randrange(2)
    else:
        src = page * r.randrange(max(pages, 1))
        ln = page * r.randint(1, 3)
        off = page * r.randrange(max(est[f] // page, 1) + (k == "reflink"))
    off = min(off, limit - up(ln))
    if k == "reflink":
        share = (f, s, src, off, ln)
    return (f, s, src, off, ln)


for i in range(300):
    k = kinds[i % len(kinds)] if i < len(kinds) else r.choice(kinds)
    f = r.choice([1, 2])
    off = r.choice([size[f], size[f] // page * page, r.randrange(0, limit // 2)])
    ln = r.choice([r.randint(1, 512), r.randint(1, 2 * page), page * r.randint(1, 4)])
    if k.startswith("dwrite") or k in ("fcollapse", "finsert"):
        off, ln = off // page * page, page * r.randint(1, 3)
    if k == "dwrite -s" and r.randrange(4):
        off = dpos[f]
    off, ln = min(off, limit - 6 * page), ln
    if k == "dwrite -s":
        dpos[f] = off + ln
    if k in ("msync", "msync -a", "munmap", "fsync", "fdatasync", "syncfs", "drop_caches"):
        print(f"f{f} {k}")
    elif k == "truncate":
        est[f] = r.randrange(0, limit)
        print(f"f{f} truncate {hex(est[f])}")
    elif k == "copy_range":
        print(f"f{f} copy_range f{3 - f} {hex(r.randrange(0, limit // 2))} {hex(off)} {hex(ln)}")
    elif k in ("reflink", "dedupe"):
        f, s, src, off, ln = remap(k, f)
        if k == "reflink":
            est[f] = max(est[f], off + ln)
        print(f"f{f} {k} f{s} {hex(src)} {hex(off)} {hex(ln)}")
    elif k == "pwritev":
        ln = max(ln, 4)
        cuts = sorted(r.sample(range(1, ln), r.randint(1, 3)))
        lens = [b - a for a, b in zip([0] + cuts, cuts + [ln])]
        est[f] = max(est[f], off + ln)
        print(f"f{f} pwritev {hex(off)} " + " ".join(hex(n) for n in lens))
    else:
        if k in ("pwrite", "write", "falloc", "fzero") or k.startswith("dwrite"):
            est[f] = max(est[f], off + ln)
        if k == "fcollapse" and off + ln < est[f]:
            est[f] -= ln
        if k == "finsert" and off < est[f] and est[f] + ln <= limit:
            est[f] += ln
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

# where it runs: tmpfs, ext4, xfs with reflink (reflink and dedupe run
# there; tmpfs and ext4 refuse them) and btrfs, each fs on a loop file
mkdir -p "$T/tmpfs" "$T/ext4" "$T/xfs" "$T/btrfs"
mount -t tmpfs -o size=64m tmpfs "$T/tmpfs" && on_exit umount "$T/tmpfs"
truncate -s 256M "$T/ext4.img" "$T/btrfs.img"
truncate -s 320M "$T/xfs.img"
mkfs.ext4 -q -F "$T/ext4.img"
mkfs.xfs -q -f -m reflink=1 "$T/xfs.img"
mkfs.btrfs -q -f "$T/btrfs.img" >/dev/null
for fs in ext4 xfs btrfs; do
  mount -o loop "$T/$fs.img" "$T/$fs" && on_exit umount "$T/$fs"
done

# ran KIND FS: how many KIND ops (dwrite -s: "dwrite -s") of the list ran
# on FS (repro.c's output there), not refused
ran () {
  awk -v k="$1" 'NR == FNR { if ($1 == "op" && $3 == "refused") gone[$2] = 1; next }
                 !(FNR in gone) && ($2 == k || $2 " " $3 == k) { n++ } END { print n + 0 }' \
    "$T/all.$2.out" "$T/all.txt"
}
for fs in tmpfs ext4 xfs btrfs; do
  mkdir -p "$T/$fs/all"
  "$T/all" "$T/$fs/all" >"$T/all.$fs.out" 2>&1; st=$?
  check "$fs: 300 ops of every kind: REPRO: 0 bad sectors, exit 0 (exit $st)" \
    grep -qx 'REPRO: 0 bad sectors' "$T/all.$fs.out"
  diag "$fs: $(grep -c refused "$T/all.$fs.out") ops refused; ran: pwritev $(ran pwritev "$fs"), dwrite -s $(ran 'dwrite -s' "$fs"), reflink $(ran reflink "$fs"), dedupe $(ran dedupe "$fs")"
done
pwritevs=$(ran pwritev ext4) seqs=$(ran 'dwrite -s' ext4)
check "ext4: pwritev and dwrite -s ran ($pwritevs of $(grep -c ' pwritev ' "$T/all.txt"), $seqs of $(grep -c ' dwrite -s ' "$T/all.txt"))" \
  test "$pwritevs" -gt 0 -a "$seqs" -gt 0
for fs in xfs btrfs; do
  reflinks=$(ran reflink $fs) dedupes=$(ran dedupe $fs)
  check "$fs: reflink and dedupe ran, not all refused ($reflinks of $(grep -c ' reflink ' "$T/all.txt"), $dedupes of $(grep -c ' dedupe ' "$T/all.txt"))" \
    test "$reflinks" -gt 0 -a "$dedupes" -gt 0
done

# repro.sh: the same list as xfs_io commands (dd for dwrite -s), on ext4
# and on xfs, less the ops repro.c saw refused there (repro.sh takes every
# op as succeeding)
for fs in ext4 xfs; do
  mapfile -t accepted < <(awk 'NR == FNR { if ($1 == "op" && $3 == "refused") gone[$2] = 1; next }
                               !(FNR in gone)' "$T/all.$fs.out" "$T/all.txt")
  gensh "all-$fs" "${accepted[@]}"
  mkdir -p "$T/$fs/sh"
  bash "$T/all-$fs.sh" "$T/$fs/sh" >"$T/all-$fs.sh.out" 2>&1; st=$?
  check "repro.sh of the ${#accepted[@]} ops $fs takes on $fs: REPRO: 0 bad sectors, exit 0 (exit $st)" \
    sh -c "[ $st = 0 ] && grep -qx 'REPRO: 0 bad sectors' '$T/all-$fs.sh.out'"
done

# subsets: every one runs, against its own model (on ext4 and xfs in turn)
bad=""
for s in 1 2 3 4 5 6 7 8; do
  fs=$([ $((s % 2)) = 1 ] && echo ext4 || echo xfs)
  mapfile -t sub < <(python3 -c "
import random, sys
r = random.Random($s)
lines = open('$T/all.txt').read().split('\n')[:-1]
keep = sorted(r.sample(range(len(lines)), r.randint(1, len(lines))))
print('\n'.join(lines[i] for i in keep))")
  gen sub$s "${sub[@]}" >/dev/null && cc -static -O2 -o "$T/sub$s" "$T/sub$s.c" || { bad="$bad $s(build)"; continue; }
  mkdir -p "$T/$fs/sub$s"
  "$T/sub$s" "$T/$fs/sub$s" >"$T/sub$s.out" 2>&1
  grep -qx 'REPRO: 0 bad sectors' "$T/sub$s.out" || bad="$bad $s($fs)"
done
check "8 random subsets of the list: each REPRO: 0 on ext4 or xfs${bad:+ (not:$bad)}" [ -z "$bad" ]

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
out=$(gen refused "f1 pwrite 0 0x10" "f1 frob 0x0 0x10" 2>&1)
check "an op it cannot express is refused: $out" \
  sh -c "echo '$out' | grep -q 'op 2 (f1 frob 0x0 0x10): not an op the reproducers can express (they cover pwrite, .*pwritev, .*reflink, dedupe' && [ ! -e '$T/refused.c' ]"

# the calls, as the workload makes them (guest/wl-ops.c): pwritev with the
# list's iovecs, dwrite -s as lseek and write on the O_DIRECT descriptor,
# reflink's FICLONERANGE on the destination, dedupe's FIDEDUPERANGE on the
# source; ld --wrap logs each call of repro.c, then lets it through
cat >"$T/calls-log.c" <<'EOF2'
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t __real_pwritev (int, const struct iovec *, int, off_t);
ssize_t __real_pwrite (int, const void *, size_t, off_t);
ssize_t __real_write (int, const void *, size_t);
off_t __real_lseek (int, off_t, int);
int __real_ioctl (int, unsigned long, ...);

/* "fN direct" or "fN buffered" for a file of the test, else NULL */
static const char *
name (int fd, char *buf, size_t cap)
{
  char link[64], path[4096];
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (link, path, sizeof path - 1);
  if (n < 0)
    return NULL;
  path[n] = '\0';
  const char *base = strrchr (path, '/');
  if (!base || base[1] != 'f' || !strstr (path, "/calls/"))
    return NULL;
  snprintf (buf, cap, "%s %s", base + 1, fcntl (fd, F_GETFL) & O_DIRECT ? "direct" : "buffered");
  return buf;
}

ssize_t
__wrap_pwritev (int fd, const struct iovec *iov, int n, off_t off)
{
  char b[64];
  if (name (fd, b, sizeof b)) {
    fprintf (stderr, "pwritev %s %#llx", b, (unsigned long long) off);
    for (int i = 0; i < n; i++)
      fprintf (stderr, " %#zx", iov[i].iov_len);
    fprintf (stderr, "\n");
  }
  return __real_pwritev (fd, iov, n, off);
}

ssize_t
__wrap_pwrite (int fd, const void *p, size_t len, off_t off)
{
  char b[64];
  if (name (fd, b, sizeof b))
    fprintf (stderr, "pwrite %s %#llx %#zx\n", b, (unsigned long long) off, len);
  return __real_pwrite (fd, p, len, off);
}

ssize_t
__wrap_write (int fd, const void *p, size_t len)
{
  char b[64];
  if (name (fd, b, sizeof b))
    fprintf (stderr, "write %s %#zx\n", b, len);
  return __real_write (fd, p, len);
}

off_t
__wrap_lseek (int fd, off_t off, int whence)
{
  char b[64];
  if (name (fd, b, sizeof b))
    fprintf (stderr, "lseek %s %#llx%s\n", b, (unsigned long long) off,
             whence == SEEK_SET ? "" : " (not SEEK_SET)");
  return __real_lseek (fd, off, whence);
}

int
__wrap_ioctl (int fd, unsigned long req, ...)
{
  va_list ap;
  va_start (ap, req);
  void *arg = va_arg (ap, void *);
  va_end (ap);
  char b[64], s[64];
  if (req == FICLONERANGE) {
    const struct file_clone_range *r = arg;
    fprintf (stderr, "FICLONERANGE on %s: %s %#llx %#llx to %#llx\n", name (fd, b, sizeof b),
             name ((int) r->src_fd, s, sizeof s), (unsigned long long) r->src_offset,
             (unsigned long long) r->src_length, (unsigned long long) r->dest_offset);
  }
  if (req == FIDEDUPERANGE) {
    const struct file_dedupe_range *r = arg;
    fprintf (stderr, "FIDEDUPERANGE on %s: %#llx %#llx to %u: %s %#llx\n",
             name (fd, b, sizeof b), (unsigned long long) r->src_offset,
             (unsigned long long) r->src_length, r->dest_count,
             name ((int) r->info[0].dest_fd, s, sizeof s),
             (unsigned long long) r->info[0].dest_offset);
  }
  return __real_ioctl (fd, req, arg);
}
EOF2
cat >"$T/calls.want" <<'EOF2'
pwrite f1 buffered 0 0x3000
pwritev f2 buffered 0x10 0x5 0x100 0x7
lseek f1 direct 0x1000
write f1 direct 0x2000
pwrite f1 direct 0x4000 0x1000
FICLONERANGE on f2 buffered: f1 buffered 0x1000 0x1000 to 0x2000
FIDEDUPERANGE on f1 buffered: 0x1000 0x1000 to 1: f2 buffered 0x2000
EOF2
gen calls "f1 pwrite 0 0x3000" "f2 pwritev 0x10 0x5 0x100 0x7" "f1 dwrite -s 0x1000 0x2000" \
  "f1 dwrite 0x4000 0x1000" "f2 reflink f1 0x1000 0x2000 0x1000" "f2 dedupe f1 0x1000 0x2000 0x1000"
cc -static -O2 -o "$T/calls" "$T/calls.c" "$T/calls-log.c" \
  -Wl,--wrap=pwritev,--wrap=pwrite,--wrap=write,--wrap=lseek,--wrap=ioctl
mkdir -p "$T/xfs/calls"
"$T/calls" "$T/xfs/calls" 2>"$T/calls.log" >"$T/calls.out"
diag_file "$T/calls.log"
check "pwritev, dwrite -s, reflink, dedupe: repro.c's calls are the workload's ($(tail -n 1 "$T/calls.out"))" \
  sh -c "diff -u '$T/calls.want' '$T/calls.log' >&2 && grep -qx 'REPRO: 0 bad sectors' '$T/calls.out'"

# dedupe: where both ranges end at their files' EOFs the kernel compares
# every byte, partial block too (else whole blocks only): the model must
# find the tails differing as the kernel does, and so say nothing
gen dedupe-eof "f1 pwrite 0 0x1800" "f2 reflink f1 0 0 0x1800" "f2 pwrite 0x1400 0x10" \
  "f2 dedupe f1 0 0 0x1800" "f1 dedupe f2 0 0 0x1800"
cc -static -O2 -o "$T/dedupe-eof" "$T/dedupe-eof.c"
mkdir -p "$T/xfs/dedupe-eof"
"$T/dedupe-eof" "$T/xfs/dedupe-eof" >"$T/dedupe-eof.out" 2>&1; st=$?
check "xfs: a dedupe of ranges ending at EOF, differing in the last partial block: REPRO: 0 (exit $st)" \
  sh -c "[ $st = 0 ] && grep -qx 'REPRO: 0 bad sectors' '$T/dedupe-eof.out' && ! grep -q refused '$T/dedupe-eof.out'"

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
