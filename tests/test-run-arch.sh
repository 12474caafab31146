#!/bin/bash
# Guests of other architectures (wtrack-run --arch), end to end on Debian 12's
# kernels under TCG: ppc64el (64 KiB pages: sixteen 4 KiB blocks a page)
# and s390x (big-endian: the channel, the manifest and the cold pass's
# cold.bin are written on s390x and read on this host), each with vanished
# writes that the report must name exactly. Then the bad inputs: an unknown
# architecture, a kernel of another one, a missing cross compiler; each is
# refused with exit 4 before anything starts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
. "$TOP/scripts/lib-arch.sh"
require_tools qemu-system-ppc64 qemu-system-s390x jq
require_built "$TOP/guest/ppc64el/wtrack-guest" "$TOP/guest/s390x/wtrack-guest"
plan 29

# report.json's guest facts: "ARCH PAGE_SIZE BLOCK_SIZE" (ext4's 4 KiB
# blocks: sixteen a page on ppc64el)
guest_facts () { jq -r '"\(.guest.arch) \(.guest.page_size) \(.guest.block_size)"' "$T/$1/report.json" 2>/dev/null; }

# ppc64el, 64 KiB pages: the acceptance's workload with 1% of the writes
# vanished (each write is a page: 64 KiB).
wtrack_run ppc --arch ppc64el --workload linus2006 --size 16M \
  --plugin-opt fault=vanish:p=0.01:seed=7
diag "ppc64el: $(jq -c .timings "$T/ppc/report.json" 2>/dev/null)"
check_fault_run ppc lost
check "ppc: report.json says arch ppc64el, page_size 65536, block_size 4096" [ "$(guest_facts ppc)" = "ppc64el 65536 4096" ]
check "ppc: report.txt says so" grep -q '^# guest: kernel [^ ]*powerpc64le (ppc64el, 65536-byte pages)' "$T/ppc/report.txt"
check "ppc: the guest's disk requests were a page (64 KiB): max_request_kb raised from 4" \
  grep -q 'disk requests at most 64 KiB' "$T/ppc/console.log"

# s390x, big-endian: a clean run with the cold pass (the cold guest on
# s390x reads the run's channel, its manifest, and writes cold.bin, both
# read here: a hash read in the wrong order would differ in every sector),
# then vanished writes without it (a vanished metadata write can leave the
# file unreadable after a reboot, which is not what this test asks).
# the ops workload where a page holds sixteen 4 KiB blocks; without mapped
# stores past EOF, whose exposure on growth is a kernel finding (doc/ops.md)
wtrack_run ppc-ops --arch ppc64el --workload ops --size 16M --seed 1 --op-weights mwrite_eof=0 \
  --plugin-opt fault=vanish:p=0.01:seed=7
check_fault_run ppc-ops lost
check "ppc-ops: report.json says arch ppc64el, page_size 65536, block_size 4096" [ "$(guest_facts ppc-ops)" = "ppc64el 65536 4096" ]

cold_runs=yes wtrack_run s390-clean --arch s390x --workload linus2006 --size 8M
diag "s390x: $(jq -c .timings "$T/s390-clean/report.json" 2>/dev/null)"
check "s390-clean: exit 0, clean" \
  [ "$run_status" = 0 ] && [ "$(jq -r .verdict "$T/s390-clean/report.json")" = clean ]
check "s390-clean: report.json says arch s390x, page_size 4096, block_size 4096" [ "$(guest_facts s390-clean)" = "s390x 4096 4096" ]
check "s390-clean: the cold pass ran on the s390x kernel and read all 16384 sectors back as expected" \
  [ "$(jq -r '"\(.cold.verdict) \(.cold.kernel) \(.cold.bad_sectors)"' "$T/s390-clean/report.json")" \
    = "clean $(jq -r .guest.kernel "$T/s390-clean/report.json") 0" ]
wtrack_run s390 --arch s390x --workload linus2006 --size 8M \
  --plugin-opt fault=vanish:p=0.01:seed=3
check_fault_run s390 lost

# ---- bad input: exit 4, nothing started --------------------------------

# refused NAME OUT-DIR ARGS...: wtrack-run ARGS into OUT-DIR (which holds a
# marker), its status in $rc and stderr in $T/NAME.err
refused () {
  local name=$1 out=$2; shift 2
  mkdir -p "$out" && touch "$out/marker"
  rc=0
  "$@" --out "$out" --no-cold --accel tcg >"$T/$name.out" 2>"$T/$name.err" || rc=$?
  sed 's/^/#   /' "$T/$name.err" >&2
}

refused arch "$T/bad-arch" "$TOP/scripts/wtrack-run" --arch sparc64
check "unknown --arch: exit 4, naming the architectures there are" \
  [ "$rc" = 4 ] && grep -q 'unknown architecture: sparc64 (amd64 ppc64el arm64 s390x)' "$T/arch.err"
check "unknown --arch: the run directory is untouched" [ -e "$T/bad-arch/marker" ]

ppc_kernel=$(cd "$TOP" && scripts/get-kernel --arch ppc64el) || true
refused mismatch "$T/bad-kernel" "$TOP/scripts/wtrack-run" --arch s390x --kernel "$ppc_kernel"
check "a ppc64el kernel with --arch s390x: exit 4, naming both" \
  [ "$rc" = 4 ] && grep -q "is a kernel for ppc64el, not s390x" "$T/mismatch.err"
check "the mismatched kernel: the run directory is untouched" [ -e "$T/bad-kernel/marker" ]
refused mismatch2 "$T/bad-kernel2" "$TOP/scripts/wtrack-run" --kernel "$ppc_kernel"
check "a ppc64el kernel without --arch (amd64): exit 4, naming --arch ppc64el" \
  [ "$rc" = 4 ] && grep -q "give --arch ppc64el" "$T/mismatch2.err"

# A tree without the s390x guest, on a PATH without its cross compiler: a
# copy of the scripts beside links to this tree's builds, and a folder of
# links to every command but s390x-linux-gnu-gcc*.
top=$T/top
mkdir -p "$top/scripts" "$top/share" "$top/guest" "$T/bin"
cp "$TOP"/scripts/{wtrack-run,lib-arch.sh,lib.sh,get-kernel,mkinitramfs} "$top/scripts/"
cp "$TOP"/share/{arches,mkinitramfs-modules.awk} "$top/share/"
ln -s "$TOP/plugin" "$TOP/checker" "$top/"
ln -s "$TOP/guest/wtrack-guest" "$TOP/guest/init" "$top/guest/"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
  for f in "$d"/*; do
    case ${f##*/} in s390x-linux-gnu-gcc*) continue ;; esac
    [ -e "$T/bin/${f##*/}" ] || ln -s "$f" "$T/bin/${f##*/}"
  done
done
rc=0
PATH=$T/bin "$top/scripts/wtrack-run" --arch s390x --out "$T/bad-cc" --no-cold \
  >"$T/cc.out" 2>"$T/cc.err" || rc=$?
sed 's/^/#   /' "$T/cc.err" >&2
check "no s390x guest and no cross compiler: exit 4, naming the packages to install" \
  [ "$rc" = 4 ] && grep -q 'install gcc-s390x-linux-gnu libc6-dev-s390x-cross' "$T/cc.err"
check "no cross compiler: no run directory made" [ ! -e "$T/bad-cc" ]
done_testing
