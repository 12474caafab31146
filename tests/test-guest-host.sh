#!/bin/bash
# wtrack-guest on the host, on real filesystems: ext4 and xfs images made
# with mkfs and loop-mounted (so FIEMAP gives real extents), and a tiny
# tmpfs (no FIEMAP; ENOSPC). After unmounting, every file sector is looked
# up through the manifest's extents in the image and must hold its expected
# hash: the extents are right and the model is what reached the disk.
. "$(dirname "$0")/lib.sh"
require_tools mkfs.ext4 mkfs.xfs losetup mount umount
HELPER=$TOP/tests/unit/test-guest-channel
require_built "$GUEST" "$HELPER"
[ "$(id -u)" = 0 ] || skip_all "loop mounts need root"
plan 27

mnt=$T/mnt
mkdir -p "$mnt"
mounted=""
# Whatever is mounted at exit is unmounted (before $T goes).
cleanup_mounts () { [ -z "$mounted" ] || umount "$mounted"; }
on_exit cleanup_mounts

# mkimage FS IMG: a sparse 320 MiB image with FS on it.
mkimage () {
  truncate -s 320M "$2"
  case $1 in
    xfs) mkfs.xfs -q -f "$2" ;;
    *) "mkfs.$1" -q -F "$2" ;;
  esac
}
mount_image () { mount -o loop "$1" "$mnt" && mounted=$mnt && mkdir -p "$mnt/data"; }
unmount_image () { umount "$mnt" && mounted=""; }
summary () { "$HELPER" --summary "$@"; }

# guest_run NAME IMG WORKLOAD ARGS...: run on IMG mounted at $mnt, leave
# the summary (with disk matches) in $T/NAME.sum and the status in $st.
st=0
guest_run () {
  local name=$1 img=$2; shift 2
  mount_image "$img" || { not_ok "$name: mount $img"; return 1; }
  st=0
  "$GUEST" "$@" --channel-file "$T/$name.chan" "$mnt/data" >"$T/$name.log" 2>&1 || st=$?
  unmount_image
  summary "$T/$name.chan" --image "$img" >"$T/$name.sum" 2>&1
  grep -E '^(result (status|error|readback)|file|error)' "$T/$name.sum" | sed 's/^/# /' >&2
}

# every file of the final manifest fully on disk where its extents say
all_on_disk () {
  awk '/^manifest checkpoint=0/ { final = 1; next } /^manifest/ { final = 0 }
       final && /^file / { n++; for (i = 1; i <= NF; i++) if ($i ~ /^disk_match=/) {
         split(substr($i, 12), a, "/"); if (a[1] != a[2] || a[2] == 0) bad++ } }
       END { exit !(n > 0 && !bad) }' "$1"
}
final_digests () { awk '/^manifest checkpoint=0/ { f = 1; next } f && /^file / { for (i = 1; i <= NF; i++) if ($i ~ /^digest=/) print $i }' "$1"; }

mkimage ext4 "$T/ext4.img"

guest_run linus "$T/ext4.img" linus2006 --size 4M --passes 2 --seed 3
check "ext4 linus2006: exits 0" [ "$st" = 0 ]
check "ext4 linus2006: RESULT status=0 readback=match" \
  grep -qx 'result readback=match' "$T/linus.sum"
check "ext4 linus2006: the remapped chunks matched" grep -qx 'result remap_check=match' "$T/linus.sum"
check "ext4 linus2006: HELLO says ext4" grep -qx 'hello fs=ext4' "$T/linus.sum"
check "ext4 linus2006: the path reads from the filesystem root (/data/f1)" \
  grep -q '^file /data/f1 size=4194304 ' "$T/linus.sum"
check "ext4 linus2006: the extents cover the file" grep -q '^file /data/f1 .*covered=yes' "$T/linus.sum"
check "ext4 linus2006: every sector is on disk where FIEMAP says" all_on_disk "$T/linus.sum"

guest_run torrent "$T/ext4.img" torrent --files 3 --size 2M --piece 128K --threads 2 --windows 4 --seed 9
check "ext4 torrent: exits 0, readback=match" \
  test "$st" = 0 -a -n "$(grep -x 'result readback=match' "$T/torrent.sum")"
check "ext4 torrent: 3 files, every sector on disk where FIEMAP says" \
  test "$(final_digests "$T/torrent.sum" | wc -l)" = 3 -a -n "$(all_on_disk "$T/torrent.sum" && echo y)"
check "ext4 torrent: windows shared pages and pieces were rewritten" \
  grep -Eq '^result shared_window_maps=[1-9]' "$T/torrent.sum"

guest_run torrent-again "$T/ext4.img" torrent --files 3 --size 2M --piece 128K --threads 2 --windows 4 --seed 9
check "ext4 torrent: the same seed again gives the same manifest hashes" \
  test "$(final_digests "$T/torrent.sum")" = "$(final_digests "$T/torrent-again.sum")"

guest_run pwrite "$T/ext4.img" pwrite --files 2 --size 1M --ops 300 --fsync-every 100 --checkpoint --seed 2
check "ext4 pwrite: exits 0, readback=match" \
  test "$st" = 0 -a -n "$(grep -x 'result readback=match' "$T/pwrite.sum")"
check "ext4 pwrite: checkpoint manifests 1, 2, 3 then the final one" \
  test "$(grep -o '^manifest checkpoint=[0-9]*' "$T/pwrite.sum" | tr '\n' ' ')" = \
  "manifest checkpoint=1 manifest checkpoint=2 manifest checkpoint=3 manifest checkpoint=0 "
check "ext4 pwrite: every sector on disk where FIEMAP says" all_on_disk "$T/pwrite.sum"
check "ext4 pwrite: MARKs for each fsync and checkpoint" \
  test "$(grep -c '^mark fsync file 2$' "$T/pwrite.sum")" = 4 -a \
  "$(grep -c '^mark checkpoint ' "$T/pwrite.sum")" = 3

# The manifest of existing files: hashes read from the file, the same as
# those the workload expected.
mount_image "$T/ext4.img"
"$GUEST" manifest --channel-file "$T/man.chan" "$mnt/data/f1" "$mnt/data/f2" >"$T/man.log" 2>&1; st=$?
unmount_image
summary "$T/man.chan" --image "$T/ext4.img" >"$T/man.sum"
check "manifest FILE...: exits 0 with the files' hashes" \
  test "$st" = 0 -a "$(final_digests "$T/man.sum")" = "$(final_digests "$T/pwrite.sum")"
check "manifest FILE...: no ops, every sector on disk" \
  test "$(grep -c ' ops_zero=2048 ' "$T/man.sum")" = 2 -a -n "$(all_on_disk "$T/man.sum" && echo y)"

guest_run fsroot "$T/ext4.img" pwrite --files 1 --size 64K --ops 10 --fs-root "$mnt/data"
check "--fs-root strips the given root: /f1" grep -q '^file /f1 ' "$T/fsroot.sum"

mkimage xfs "$T/xfs.img"
guest_run xfs "$T/xfs.img" linus2006 --size 3M --chunk 4000 --seed 1
check "xfs linus2006: exits 0, readback=match, HELLO says xfs" \
  test "$st" = 0 -a -n "$(grep -x 'result readback=match' "$T/xfs.sum")" -a -n "$(grep -x 'hello fs=xfs' "$T/xfs.sum")"
check "xfs linus2006: every sector on disk where FIEMAP says" all_on_disk "$T/xfs.sum"

# tmpfs: no FIEMAP, no disk; 1 MiB of it fills up.
mount -t tmpfs -o size=1M wtrack-test "$mnt" && mounted=$mnt
"$GUEST" pwrite --files 1 --size 200K --ops 50 --channel-file "$T/tmpfs.chan" "$mnt" >"$T/tmpfs.log" 2>&1; st=$?
summary "$T/tmpfs.chan" >"$T/tmpfs.sum"
check "tmpfs pwrite: exits 0, readback=match" \
  test "$st" = 0 -a -n "$(grep -x 'result readback=match' "$T/tmpfs.sum")"
check "tmpfs pwrite: no FIEMAP: one unmappable extent covers the file" \
  grep -q '^file /f1 size=204800 .*extents=1 covered=yes' "$T/tmpfs.sum"
rm -f "$mnt"/f*

"$GUEST" linus2006 --size 4M --channel-file "$T/full1.chan" "$mnt" >"$T/full1.log" 2>&1; st=$?
summary "$T/full1.chan" >"$T/full1.sum"
check "full tmpfs, linus2006: exits 1" [ "$st" = 1 ]
check "full tmpfs, linus2006: RESULT status=1 says SIGBUS" \
  grep -q '^result error=mmap store: .*SIGBUS' "$T/full1.sum"
rm -f "$mnt"/f*

"$GUEST" pwrite --size 4M --channel-file "$T/full2.chan" "$mnt" >"$T/full2.log" 2>&1; st=$?
summary "$T/full2.chan" >"$T/full2.sum"
check "full tmpfs, pwrite: exits 1 with RESULT status=1 No space left on device" \
  test "$st" = 1 -a -n "$(grep 'result error=pwrite: .*No space left on device' "$T/full2.sum")"
umount "$mnt" && mounted=""

"$GUEST" torrent --size 1M --channel-file "$T/nodir.chan" "$T/no-such-dir" >"$T/nodir.log" 2>&1; st=$?
summary "$T/nodir.chan" >"$T/nodir.sum"
check "a missing DIR: exits 1, RESULT status=1 names it" \
  test "$st" = 1 -a -n "$(grep 'result error=realpath: .*no-such-dir' "$T/nodir.sum")"
check "the failed run's channel decodes: HELLO then RESULT" \
  grep -qx 'messages 2 first=HELLO last=RESULT' "$T/nodir.sum"
done_testing
