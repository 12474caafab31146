#!/bin/bash
# test-scripts-initramfs-boot: scripts/mkinitramfs builds initramfs images for
# Debian's kernel (modules from modules.dep, in load order) that really boot
# under QEMU and mount ext4 over virtio-blk, xfs over IDE and btrfs over
# virtio-scsi.
set -euo pipefail
. "$(dirname "$0")/lib-boot.sh"
cd "$TOP"

require_tools apt-get dpkg-deb depmod cpio gzip qemu-system-x86_64 timeout \
  mkfs.ext4 mkfs.xfs mkfs.btrfs busybox
busybox=$(command -v busybox)
if LC_ALL=C readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
  skip_all "busybox is not static (install busybox-static): $busybox"
fi
plan 11

tmp=""
tmp=$T
boot_write_test_init "$tmp/init"

if kernel=$(scripts/get-kernel) && modules=$(scripts/get-kernel --modules); then
  ok "get-kernel: $kernel"
else
  not_ok "get-kernel"
  bail_out
fi

# the module list of an initramfs, one path a line
list_modules () { gzip -dc "$1" | (cd "$tmp" && cpio -i --quiet --to-stdout etc/wtrack/modules); }
# line number of the module NAME.ko in the list (0 if absent)
line_of () { grep -n "/$2\.ko\$" <<<"$1" | head -n 1 | cut -d: -f1 || true; }

# build an initramfs for FS and IF, boot it with a disk of FS on IF
boot_case () { # FS IF MACHINE MODULE-BEFORE MODULE-AFTER
  local fs=$1 dif=$2 machine=$3 before=$4 after=$5 initrd=$tmp/initrd-$1-$2 list a b
  if scripts/mkinitramfs --kernel "$kernel" --modules "$modules" --fs "$fs" \
      --disk-if "$dif" --guest "$busybox" --init "$tmp/init" \
      --out "$initrd" 2>"$tmp/mkinitramfs.err"; then
    list=$(list_modules "$initrd")
    a=$(line_of "$list" "$before"); b=$(line_of "$list" "$after")
    if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]; then
      ok "mkinitramfs $fs/$dif lists $before before $after"
    else
      not_ok "mkinitramfs $fs/$dif lists $before before $after"
      diag "$list"
    fi
  else
    not_ok "mkinitramfs $fs/$dif"
    diag_file "$tmp/mkinitramfs.err"
    not_ok "boot $fs on $dif (no initramfs)"
    return
  fi
  boot_mkfs "$fs" "$tmp/disk-$fs.img"
  local start=$SECONDS
  if boot_qemu --kernel "$kernel" --initrd "$initrd" --machine "$machine" \
      --disk "$tmp/disk-$fs.img,$dif" --append "wttest.fs=$fs" \
      --console "$tmp/console-$fs.log"; then
    ok "boot $fs on $dif (-machine $machine): WTTEST-OK in $((SECONDS - start)) s"
  else
    not_ok "boot $fs on $dif (-machine $machine)"
    diag_file "$tmp/console-$fs.log"
  fi
}

boot_case ext4 virtio q35 jbd2 ext4
boot_case xfs ide pc libcrc32c xfs
boot_case btrfs scsi q35 scsi_mod virtio_scsi

# the soft dependency ext4 -> crc32c resolves to the generic module
list=$(list_modules "$tmp/initrd-ext4-virtio")
check "ext4 pulls in crc32c_generic (modules.softdep)" [ -n "$(line_of "$list" crc32c_generic)" ]

# no --modules: no modules at all
if scripts/mkinitramfs --kernel "$kernel" --fs ext4 --guest "$busybox" --init "$tmp/init" \
    --out "$tmp/initrd-none" 2>/dev/null && [ -z "$(list_modules "$tmp/initrd-none")" ]; then
  ok "without --modules the initramfs lists no modules"
else
  not_ok "without --modules the initramfs lists no modules"
fi

# the archive has /init, the guest and busybox links, owned by root
listing=$(gzip -dc "$tmp/initrd-none" | cpio -t -v --quiet 2>/dev/null)
if grep -qE ' root +root .* init$' <<<"$listing" && grep -q ' bin/wtrack-guest$' <<<"$listing" &&
    grep -q ' bin/sh -> /bin/busybox$' <<<"$listing"; then
  ok "initramfs holds /init, /bin/wtrack-guest and busybox links, owned by root"
else
  not_ok "initramfs holds /init, /bin/wtrack-guest and busybox links, owned by root"
fi

err=$(scripts/mkinitramfs --kernel "$kernel" --fs reiserfs --init "$tmp/init" \
  --guest "$busybox" --out "$tmp/x" 2>&1) && rc=0 || rc=$?
if [ "$rc" != 0 ] && [[ "$err" == *"unknown filesystem: reiserfs"* ]]; then
  ok "an unknown filesystem fails and is named"
else
  not_ok "an unknown filesystem fails and is named (status $rc: $err)"
fi
done_testing
