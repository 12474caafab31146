#!/bin/bash
# test-scripts-get-kernel: scripts/get-kernel fetches Debian's kernel into the
# cache, prints its path, and reuses it at once.
set -euo pipefail
. "$(dirname "$0")/lib-boot.sh"
cd "$TOP"

require_tools apt-get apt-cache dpkg-deb depmod
plan 6

if kernel=$(scripts/get-kernel) && [ -f "$kernel" ] && [ -s "$kernel" ]; then
  ok "get-kernel prints an existing vmlinuz: $kernel"
else
  not_ok "get-kernel prints an existing vmlinuz: ${kernel:-(nothing)}"
fi

start=$(date +%s%N)
again=$(scripts/get-kernel || true)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "second call prints the same path (${ms} ms)" [ "$again" = "$kernel" ]
check "second call is fast (${ms} ms < 5000 ms)" [ "$ms" -lt 5000 ]

modules=$(scripts/get-kernel --modules || true)
release=${kernel##*/vmlinuz-}
check "--modules prints lib/modules/$release with modules.dep" \
  test -f "$modules/modules.dep" -a "$(basename "$modules")" = "$release"

version=$(scripts/get-kernel --version "$release" || true)
check "--version $release prints the same kernel" [ "$version" = "$kernel" ]

err=$(scripts/get-kernel --bogus 2>&1 >/dev/null) && rc=0 || rc=$?
if [ "$rc" != 0 ] && [[ "$err" == *"unknown option: --bogus"* ]]; then
  ok "an unknown option fails and is named"
else
  not_ok "an unknown option fails and is named (status $rc: $err)"
fi
done_testing
