#!/bin/bash
# test-common-byteorder: every format's byte order (tests/unit/test-byteorder)
# on the other architectures, run under qemu-user: s390x is big-endian, so
# common/'s writers and readers must put and take every integer
# little-endian there too; ppc64el and arm64 are little-endian, other
# compilers. A host-order store anywhere fails most of its points on s390x.
. "$(dirname "$0")/lib.sh"
. "$TOP/scripts/lib-arch.sh"

arches=(ppc64el arm64 s390x)
for a in "${arches[@]}"; do
  arch_load "$a"
  require_tools "qemu-$arch_machine"
  require_built "$TOP/tests/unit/$a/test-byteorder"
done
plan $((2 * ${#arches[@]}))

for a in "${arches[@]}"; do
  arch_load "$a"
  rc=0
  "qemu-$arch_machine" "$TOP/tests/unit/$a/test-byteorder" >"$T/$a.tap" 2>&1 || rc=$?
  sed 's/^/#   /' "$T/$a.tap" | grep -v '^#   \(ok \|1\.\.\)' >&2 || true
  check "$a ($arch_order): test-byteorder exits 0 under qemu-$arch_machine" [ "$rc" = 0 ]
  planned=$(sed -n 's/^1\.\.//p' "$T/$a.tap")
  check "$a: all ${planned:-?} points pass" \
    [ -n "$planned" ] && [ "$(grep -c '^ok ' "$T/$a.tap")" = "$planned" ]
done
done_testing
