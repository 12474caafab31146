#!/bin/bash
# test-scripts-build-kernel: scripts/build-kernel builds a kernel from Debian's
# linux-source-6.1 with everything built in, which boots without modules and
# mounts ext4 over virtio-blk, xfs over IDE and btrfs over virtio-scsi; a
# second call returns the cached build at once; a patched variant rebuilds
# through ccache. The first run takes minutes
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
plan 9

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

# A patched variant of the tree just built recompiles only what the patch
# changes (ccache, doc/design.md "Kernels and the initramfs"). The patch
# carries a token of this run, so the variant is never in the build cache
# and the compile really happens; its cache entry is removed afterwards.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/wtrack
token="$$-$(date +%s%N)"
cat >"$tmp/variant.patch" <<EOF
--- a/fs/ext4/fsync.c
+++ b/fs/ext4/fsync.c
@@ -137,6 +137,7 @@
 		return -EIO;
 
 	ASSERT(ext4_journal_current_handle() == NULL);
+	pr_debug("wtrack build-kernel test $token\\n");
 
 	trace_ext4_sync_file_enter(file, datasync);
 
EOF
ccache_count () {
  CCACHE_DIR=$cache/ccache ccache --print-stats 2>/dev/null |
    awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) print 0 }'
}
hits0=$(( $(ccache_count direct_cache_hit) + $(ccache_count preprocessed_cache_hit) ))
miss0=$(ccache_count cache_miss)
start=$SECONDS
variant=$(scripts/build-kernel --patch "$tmp/variant.patch" 2>"$tmp/variant.err") || variant=""
secs=$((SECONDS - start))
hits=$(( $(ccache_count direct_cache_hit) + $(ccache_count preprocessed_cache_hit) - hits0 ))
misses=$(( $(ccache_count cache_miss) - miss0 ))
diag "patched variant: ${secs} s, ccache $hits hits, $misses misses (load $(cut -d' ' -f1-3 /proc/loadavg))"
if [ -n "$variant" ] && [ -s "$variant" ] && ! cmp -s "$variant" "$bzimage"; then
  ok "a patched variant builds (${secs} s) and differs from the plain kernel"
else
  not_ok "a patched variant builds and differs from the plain kernel"
  diag_file "$tmp/variant.err" 30
fi
# other builds may share the cache at the same time: only a floor is sure
check "the variant came from ccache: $hits hits, $misses misses (at least 90% hits)" \
  test "$hits" -gt 0 -a $((hits * 100)) -ge $(( (hits + misses) * 90 ))
[ -n "$variant" ] && rm -rf "$(dirname "$variant")"
done_testing
