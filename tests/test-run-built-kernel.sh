#!/bin/bash
# A kernel from scripts/build-kernel (Debian's 6.1 source, no patches, no
# modules) boots and runs linus2006; a second build-kernel call returns the
# cached image at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools make gcc flex bison bc
plan 10

kernel=$("$TOP/scripts/build-kernel" 2>"$T/build.err") || { sed 's/^/#   /' "$T/build.err" >&2; kernel=""; }
check "build-kernel prints a bzImage" test -n "$kernel" -a -f "$kernel"
start=$SECONDS
again=$("$TOP/scripts/build-kernel" 2>/dev/null) || again=""
check "a second build-kernel call returns the same image" test "$again" = "$kernel"
check "... at once ($((SECONDS - start))s)" test $((SECONDS - start)) -lt 15

wtrack_run built --keep --kernel "$kernel" --sysctl vm.dirty_ratio=5 --workload linus2006 --size 4M --seed 21
check "the built kernel runs linus2006 and the report is clean" test "$run_status" = 0
check "no modules went into its initramfs" \
  test -z "$(gzip -dc "$T/built/initramfs.img" 2>/dev/null | cpio -t 2>/dev/null | grep '\.ko$')"
check_run_facts built
done_testing
