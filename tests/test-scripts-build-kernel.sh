#!/bin/bash
# test-scripts-build-kernel: scripts/build-kernel builds a kernel from Debian's
# linux-source-6.1 with everything built in, which boots without modules and
# mounts ext4 over virtio-blk, xfs over IDE and btrfs over virtio-scsi; a
# second call returns the cached build at once (a patched variant through
# ccache: tests/test-run-ops-patched.sh). The first run takes minutes
# (the build is cached under ${XDG_CACHE_HOME:-$HOME/.cache}/wtrack/build).
set -euo pipefail
. "$(dirname "$0")/lib-boot.sh"
cd "$TOP"

require_tools make gcc flex bison bc patch cpio gzip qemu-system-x86_64 timeout ccache \
  mkfs.ext4 mkfs.xfs mkfs.btrfs busybox
source=/usr/src/linux-source-6.1.tar.xz
[ -f "$source" ] || skip_all "kernel source missing (install linux-source-6.1): $source"
busybox=$(command -v busybox)
if LC_ALL=C readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
  skip_all "busybox is not static (install busybox-static): $busybox"
fi
plan 7

tmp=""
tmp=$T
boot_write_test_init "$tmp/init"

start=$SECONDS
if bzimage=$(scripts/build-kernel 2>"$tmp/build.err") && [ -s "$bzimage" ]; then
  ok "build-kernel prints an existing bzImage in $((SECONDS - start)) s: $bzimage"
else
  not_ok "build-kernel prints an existing bzImage"
  diag_file "$tmp/build.err" 50
  bail_out
fi

config=$(dirname "$bzimage")/config
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=y' share/kernel-config.fragment | grep -vxF -f "$config" || true)
if [ -z "$missing" ] && ! grep -q '^CONFIG_MODULES=y' "$config"; then
  ok "the kernel's config has every fragment option and no modules"
else
  not_ok "the kernel's config has every fragment option and no modules"
  diag "missing: $missing"
fi

for c in ext4:virtio:q35 xfs:ide:pc btrfs:scsi:q35; do
  IFS=: read -r fs dif machine <<<"$c"
  if ! scripts/mkinitramfs --kernel "$bzimage" --fs "$fs" --disk-if "$dif" \
      --guest "$busybox" --init "$tmp/init" --out "$tmp/initrd-$fs" 2>"$tmp/mk.err"; then
    not_ok "boot $fs on $dif: mkinitramfs failed"
    diag_file "$tmp/mk.err"
    continue
  fi
  boot_mkfs "$fs" "$tmp/disk-$fs.img"
  t=$SECONDS
  if boot_qemu --kernel "$bzimage" --initrd "$tmp/initrd-$fs" --machine "$machine" \
      --disk "$tmp/disk-$fs.img,$dif" --append "wttest.fs=$fs" \
      --console "$tmp/console-$fs.log"; then
    ok "boot $fs on $dif (-machine $machine, no modules): WTTEST-OK in $((SECONDS - t)) s"
  else
    not_ok "boot $fs on $dif (-machine $machine, no modules)"
    diag_file "$tmp/console-$fs.log"
  fi
done

start=$(date +%s%N)
again=$(scripts/build-kernel 2>/dev/null || true)
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "second call prints the same path at once (${ms} ms < 10000 ms)" \
  test "$again" = "$bzimage" -a "$ms" -lt 10000

# an option whose dependencies are missing is reported, not silently dropped
printf 'CONFIG_DRM_I915=y\n' >"$tmp/bad.config"
err=$(scripts/build-kernel --config "$tmp/bad.config" 2>&1 >/dev/null) && rc=0 || rc=$?
if [ "$rc" != 0 ] && [[ "$err" == *"dropped"*"CONFIG_DRM_I915=y"* ]]; then
  ok "an option dropped by olddefconfig fails the build and is named"
else
  not_ok "an option dropped by olddefconfig fails the build and is named (status $rc)"
  diag "$err"
fi

# A patched variant rebuilt through ccache: tests/test-run-ops-patched.sh
# (the one patched kernel make check compiles, which it also runs).
done_testing
