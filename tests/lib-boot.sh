# tests/lib-boot.sh: helpers for shell tests that boot a kernel under QEMU.
# shellcheck shell=bash disable=SC2034
#
# Source it from a test (bash, set -euo pipefail is fine):
#
#   . "$(dirname "$0")/lib-boot.sh"               # sources lib.sh too
#   require_tools qemu-system-x86_64 mkfs.ext4    # skip (or fail in CI)
#   plan 2
#   tmp=$T                                          # removed at exit
#   boot_write_test_init "$tmp/init"                # a small busybox init
#   scripts/mkinitramfs --kernel K --modules M --fs ext4 --init "$tmp/init" \
#       --guest /bin/busybox --out "$tmp/initrd"
#   boot_mkfs ext4 "$tmp/disk.img"                  # sparse 320 MiB
#   if boot_qemu --kernel K --initrd "$tmp/initrd" --disk "$tmp/disk.img" \
#           --append "wttest.fs=ext4" --console "$tmp/console.log" \
#           --marker WTTEST-OK; then
#       ok "boots"
#   else
#       not_ok "boots"; diag_file "$tmp/console.log"
#   fi
#
# Variables: BOOT_TIMEOUT (seconds per boot, default 120), BOOT_QEMU (the
# QEMU binary, default qemu-system-x86_64); TOP and the rest from lib.sh.
# Boots always use TCG (no KVM), 512 MiB, one CPU, no network, the serial
# console written to a file.

# The TAP helpers, $T and its clean-up come from lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
BOOT_QEMU=${BOOT_QEMU:-qemu-system-x86_64}

# ---- disks and guests ---------------------------------------------------

# boot_mkfs FS IMG [MIB]: create a sparse image of MIB MiB (default 320) and
# make filesystem FS (ext2, ext3, ext4, xfs, btrfs) on it (xfs needs >= 300)
boot_mkfs () {
  local fs=$1 img=$2 mib=${3:-320}
  rm -f "$img"
  truncate -s "${mib}M" "$img"
  case "$fs" in
    ext2|ext3|ext4) "mkfs.$fs" -q -F "$img" ;;
    xfs) mkfs.xfs -q -f "$img" ;;
    btrfs) mkfs.btrfs -q -f "$img" >/dev/null ;;
    *) echo "boot_mkfs: unknown filesystem: $fs" >&2; return 1 ;;
  esac
}

# boot_write_test_init FILE: write a small busybox init script that
#   - mounts /proc, /sys, /dev,
#   - loads the modules listed in /etc/wtrack/modules (see scripts/mkinitramfs),
#   - waits for the first disk (/dev/vda, /dev/sda),
#   - mounts it with the filesystem named by wttest.fs= on the kernel command
#     line (default ext4), writes, syncs, reads back and unmounts a file,
#   - prints WTTEST-OK on the console when all worked (WTTEST-FAIL: why,
#     otherwise), then powers off with "reboot -f" (boot QEMU with -no-reboot).
boot_write_test_init () {
  cat >"$1" <<'INIT'
#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
fail () { echo "WTTEST-FAIL: $*"; sync; reboot -f; sleep 10; }
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev 2>/dev/null
fs=ext4
for arg in $(cat /proc/cmdline); do
  case "$arg" in wttest.fs=*) fs=${arg#wttest.fs=} ;; esac
done
release=$(cat /etc/wtrack/release 2>/dev/null)
while read -r m; do
  [ -n "$m" ] || continue
  insmod "/lib/modules/$release/$m" || fail "insmod $m"
done < /etc/wtrack/modules
echo "WTTEST: modules loaded: $(wc -l < /etc/wtrack/modules)"
dev=""
i=0
while [ -z "$dev" ] && [ $i -lt 100 ]; do
  for d in /dev/vda /dev/sda; do
    [ -b "$d" ] && dev=$d && break
  done
  [ -n "$dev" ] || { sleep 0.1; i=$((i + 1)); }
done
[ -n "$dev" ] || fail "no disk appeared: $(ls /sys/block | tr '\n' ' ')"
echo "WTTEST: disk $dev"
mkdir -p /mnt/disk
mount -t "$fs" "$dev" /mnt/disk || fail "mount -t $fs $dev"
echo "wtrack test line" > /mnt/disk/hello || fail "write"
sync
[ "$(cat /mnt/disk/hello)" = "wtrack test line" ] || fail "read back"
umount /mnt/disk || fail "umount"
echo "WTTEST-OK $fs $dev"
reboot -f
sleep 10
INIT
  chmod 755 "$1"
}

# boot_qemu [options]: boot a kernel and initramfs under QEMU (TCG) and wait
# until it exits (the guest powers off with "reboot -f", QEMU runs with
# -no-reboot) or BOOT_TIMEOUT seconds pass. Returns 0 when the console shows
# the marker, 1 otherwise (2 on bad options).
#   --kernel FILE      the kernel (bzImage / vmlinuz)
#   --initrd FILE      the initramfs
#   --disk IMG[,IF]    a raw disk, IF virtio (default), scsi (virtio-scsi) or
#                      ide; repeatable, in order; serials wtdisk0, wtdisk1, ...
#   --machine M        QEMU machine: q35 (default) or pc (needed for ata_piix)
#   --append ARGS      more kernel command line after "console=ttyS0 panic=-1"
#   --console FILE     where the serial console goes (required)
#   --marker TEXT      the console text meaning success (default WTTEST-OK)
#   --qemu-arg ARG     one more QEMU argument (repeatable)
boot_qemu () {
  local kernel="" initrd="" machine=q35 append="" console="" marker=WTTEST-OK
  local disks=() extra=() args=() d img if n=0 scsi=0 rc
  while [ $# -gt 0 ]; do
    case "$1" in
      --kernel) kernel=$2; shift ;;
      --initrd) initrd=$2; shift ;;
      --disk) disks+=("$2"); shift ;;
      --machine) machine=$2; shift ;;
      --append) append=$2; shift ;;
      --console) console=$2; shift ;;
      --marker) marker=$2; shift ;;
      --qemu-arg) extra+=("$2"); shift ;;
      *) echo "boot_qemu: unknown option: $1" >&2; return 2 ;;
    esac
    shift
  done
  if [ -z "$kernel" ] || [ -z "$initrd" ] || [ -z "$console" ]; then
    echo "boot_qemu: --kernel, --initrd and --console are required" >&2
    return 2
  fi
  args=(-machine "$machine,accel=tcg" -m 512 -smp 1 -nodefaults
    -display none -monitor none -no-reboot
    -serial "file:$console"
    -kernel "$kernel" -initrd "$initrd"
    -append "console=ttyS0 panic=-1 quiet $append")
  for d in ${disks[@]+"${disks[@]}"}; do
    img=${d%%,*}
    if=virtio
    [ "$img" = "$d" ] || if=${d#*,}
    case "$if" in
      virtio)
        args+=(-drive "file=$img,format=raw,if=none,id=d$n,cache=unsafe"
          -device "virtio-blk-pci,drive=d$n,serial=wtdisk$n") ;;
      scsi)
        if [ $scsi = 0 ]; then args+=(-device "virtio-scsi-pci,id=scsi0"); scsi=1; fi
        args+=(-drive "file=$img,format=raw,if=none,id=d$n,cache=unsafe"
          -device "scsi-hd,bus=scsi0.0,drive=d$n,serial=wtdisk$n") ;;
      ide)
        args+=(-drive "file=$img,format=raw,if=ide,index=$n,cache=unsafe") ;;
      *) echo "boot_qemu: unknown disk interface: $if" >&2; return 2 ;;
    esac
    n=$((n + 1))
  done
  : >"$console"
  rc=0
  timeout --kill-after=10 "$BOOT_TIMEOUT" "$BOOT_QEMU" "${args[@]}" \
    ${extra[@]+"${extra[@]}"} </dev/null >"$console.qemu" 2>&1 || rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    echo "boot_qemu: timed out after $BOOT_TIMEOUT s" >>"$console"
  elif [ $rc != 0 ]; then
    echo "boot_qemu: $BOOT_QEMU exited with status $rc:" >>"$console"
    cat "$console.qemu" >>"$console"
  fi
  grep -q -- "$marker" "$console"
}
