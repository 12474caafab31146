#!/bin/bash
# The cold pass on real boots (Debian's kernel): after the run, a freshly
# booted kernel reads the files back from an overlay of disk.img and fsck
# checks the recovered disk. Clean runs on ext4, xfs and ext2 agree; a
# plugin fault that makes every write to the inode tables vanish (metadata
# lost, data intact) leaves the warm check clean while the cold pass and
# fsck find the damage; a lost data write is reported warm and cold.
. "$(dirname "$0")/lib.sh"
cold_runs=yes
. "$(dirname "$0")/lib-run.sh"
require_tools mkfs.xfs e2fsck xfs_repair dumpe2fs qemu-img /usr/bin/python3
plan 28

# key=value facts of run NAME's report.json: verdicts, counts, fsck.
json_facts () {
  /usr/bin/python3 - "$T/$1/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cold"]
print("verdict=%s" % r["verdict"])
print("warm_bad=%d" % r["bad_sectors"])
print("cold_verdict=%s" % c["verdict"])
print("cold_ran=%s" % c["ran"])
print("cold_damaged=%d" % c["files_damaged"])
print("cold_bad=%d" % c["bad_sectors"])
print("cold_classes=%s" % ",".join(sorted(k for k, v in c["by_class"].items() if v)))
print("fsck=%s" % (c["fsck"]["verdict"] if c["fsck"] else "none"))
print("cold_files=%s" % ",".join(f["path"] for f in c["files"]))
PY
}
fact () { sed -n "s/^$2=//p" "$T/$1.facts"; }
facts () { json_facts "$1" >"$T/$1.facts" 2>&1; diag "$1: $(tr '\n' ' ' <"$T/$1.facts")"; }

# fault= options making every write to an inode table of IMAGE vanish
# (dumpe2fs's ranges, merged, in 512-byte sectors).
inode_table_faults () {
  local bs
  bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Block size: *//p')
  dumpe2fs "$1" 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-\([0-9]*\).*/\1 \2/p' |
    sort -n | awk -v bs="$bs" '
      { if (n && $1 == last + 1) { last = $2; next }
        if (n) print first, last; first = $1; last = $2; n = 1 }
      END { if (n) print first, last }' |
    while read -r a b; do
      echo "--plugin-opt fault=vanish:lba=$((a * bs / 512))-$(((b + 1) * bs / 512 - 1))"
    done
}

clean_case () {
  local name=$1; shift
  wtrack_run "$name" --disk-size 256M "$@"
  facts "$name"
  check "$name: wtrack-run exits 0" [ "$run_status" = 0 ]
  check "$name: the cold pass ran and agrees (cold verdict clean)" \
    [ "$(fact "$name" cold_ran)" = True -a "$(fact "$name" cold_verdict)" = clean ]
  check "$name: fsck of the recovered disk is clean" [ "$(fact "$name" fsck)" = clean ]
}

clean_case ext4 --fs ext4 --workload linus2006 --size 4M --seed 2
check "ext4: disk.img is unchanged by the cold pass (cold.qcow2 is an overlay)" \
  cmp -s <(qemu-img info --output=json "$T/ext4/cold.qcow2" | grep -o '"backing-filename": "[^"]*"') \
  <(echo '"backing-filename": "disk.img"')
check "ext4: report.txt has the cold verdict line" grep -q '^cold: clean: 0 of 1 files differ after a reboot' "$T/ext4/report.txt"
# --cold-only: the pass, fsck and the check again on the finished run.
rm -f "$T/ext4/cold.bin" "$T/ext4/fsck.txt" "$T/ext4/report.txt"
cold_only_status=0
"$TOP/scripts/wtrack-run" --cold-only "$T/ext4" >"$T/cold-only.out" 2>"$T/cold-only.err" \
  || cold_only_status=$?
diag "cold-only: exit $cold_only_status"
cold_only_ok () {
  [ "$cold_only_status" = 0 ] && [ -s "$T/ext4/cold.bin" ] \
    && grep -q '^cold: clean' "$T/ext4/report.txt" && grep -q '^fsck: clean' "$T/ext4/report.txt"
}
check "--cold-only DIR: exits 0 and the report has the cold and fsck lines again" cold_only_ok
clean_case xfs --fs xfs --disk-size 1G --workload linus2006 --size 4M --seed 3
clean_case ext2 --fs ext2 --mkfs-opts "-b 4096" --workload pwrite --files 2 --size 1M --ops 50 --seed 4

# Lost metadata: the disk is made first, to read its inode tables.
lost_metadata_case () {
  local name=$1 fs=$2
  truncate -s 256M "$T/$name.img"
  "mkfs.$fs" -F -q -b 4096 "$T/$name.img"
  # shellcheck disable=SC2046 # one word an option
  wtrack_run "$name" --fs "$fs" --mkfs-opts "-b 4096" --disk-size 256M \
    $(inode_table_faults "$T/$name.img") --workload pwrite --files 2 --size 1M --ops 50 --seed 5
  facts "$name"
  check "$name: wtrack-run exits 1" [ "$run_status" = 1 ]
  check "$name: the warm check is clean (every data sector where FIEMAP said)" \
    [ "$(fact "$name" warm_bad)" = 0 ]
  check "$name: the cold pass names damaged files" [ "$(fact "$name" cold_damaged)" -gt 0 ]
  check "$name: fsck complains" [ "$(fact "$name" fsck)" = errors ]
  check "$name: the overall verdict is damaged" [ "$(fact "$name" verdict)" = damaged ]
  check "$name: report.txt says the disk after a reboot is damaged" \
    grep -q '^verdict: damaged: 0 bad sectors; the disk after a reboot is damaged' "$T/$name/report.txt"
}
lost_metadata_case lostmeta-ext2 ext2
lost_metadata_case lostmeta-ext4 ext4

# Lost data writes: a few writes vanish at random (most writes are the
# file's data): the warm check reports them as today, and so does the cold
# pass, as stale (the disk holds the pre-run content) or lost.
wtrack_run lostdata --disk-size 256M --workload linus2006 --size 4M --seed 2 \
  --plugin-opt fault=vanish:p=0.01:count=4:seed=11
facts lostdata
check "lostdata: wtrack-run exits 1" [ "$run_status" = 1 ]
check "lostdata: the warm check reports lost sectors" [ "$(fact lostdata warm_bad)" -gt 0 ]
check "lostdata: the cold pass reports bad sectors too" [ "$(fact lostdata cold_bad)" -gt 0 ]
check "lostdata: the cold classes are stale or lost" \
  grep -Eq '^cold_classes=(lost|stale|lost,stale)$' "$T/lostdata.facts"
done_testing
