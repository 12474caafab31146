#!/bin/bash
# test-scripts-get-kernel: scripts/get-kernel fetches Debian's kernel into the
# cache, prints its path, and reuses it at once.
set -euo pipefail
. "$(dirname "$0")/lib-boot.sh"
cd "$WTRACK_ROOT"

tap_require apt-get apt-cache dpkg-deb depmod
tap_plan 6

if kernel=$(scripts/get-kernel) && [ -f "$kernel" ] && [ -s "$kernel" ]; then
	tap_ok "get-kernel prints an existing vmlinuz: $kernel"
else
	tap_not_ok "get-kernel prints an existing vmlinuz: ${kernel:-(nothing)}"
fi

start=$(date +%s%N)
again=$(scripts/get-kernel || true)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
tap_check "second call prints the same path (${ms} ms)" [ "$again" = "$kernel" ]
tap_check "second call is fast (${ms} ms < 5000 ms)" [ "$ms" -lt 5000 ]

modules=$(scripts/get-kernel --modules || true)
release=${kernel##*/vmlinuz-}
tap_check "--modules prints lib/modules/$release with modules.dep" \
	test -f "$modules/modules.dep" -a "$(basename "$modules")" = "$release"

version=$(scripts/get-kernel --version "$release" || true)
tap_check "--version $release prints the same kernel" [ "$version" = "$kernel" ]

err=$(scripts/get-kernel --bogus 2>&1 >/dev/null) && rc=0 || rc=$?
if [ "$rc" != 0 ] && [[ "$err" == *"unknown option: --bogus"* ]]; then
	tap_ok "an unknown option fails and is named"
else
	tap_not_ok "an unknown option fails and is named (status $rc: $err)"
fi
tap_exit
