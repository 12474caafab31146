#!/bin/bash
# The cold pass on real boots (Debian's kernel): after the run, a freshly
# booted kernel reads the files back from an overlay of disk.img and fsck
# checks the recovered disk. Clean runs on ext4, xfs and ext2 agree; a
# plugin fault that makes the writes to the inode tables vanish (ext2) or
# lie (ext4) once the files are half written (metadata lost, data intact)
# leaves the warm check clean while the cold pass finds a file short, fsck
# complains and the log names the lied metadata write; an ext2 file whose
# indirect block never reaches the disk is unmapped past 48 KiB after the
# reboot; a block pointer moved by hand to a free block is 'moved' (both
# places named) under --cold-only; a lost data write
# is reported warm and cold, and a lied one is stale (the disk holds its
# pre-run content).
. "$(dirname "$0")/lib.sh"
cold_runs=yes
. "$(dirname "$0")/lib-run.sh"
require_tools mkfs.xfs e2fsck xfs_repair dumpe2fs debugfs qemu-img /usr/bin/python3 chromium timeout
plan 44

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
print("cold_size_changed=%d" % c["size_changed"])
print("cold_sizes=%s" % ",".join("%d" % f["cold_size"] for f in c["files"]))
m = c["metadata_lacking"]
print("meta_lacking=%d" % m["sectors"])
print("meta_lacking_seqs=%s" % ",".join("%d" % x["seq"] for x in m["runs"]))
runs = [x for f in r["files"] for x in f["runs"]]
print("warm_classes=%s" % ",".join(sorted(set(x["class"] for x in runs))))
print("warm_stale=%s" % ",".join(sorted(x["class"] for x in runs if x.get("stale"))))
PY
}
fact () { sed -n "s/^$2=//p" "$T/$1.facts"; }
facts () { json_facts "$1" >"$T/$1.facts" 2>&1; diag "$1: $(tr '\n' ' ' <"$T/$1.facts")"; }

# The block size of the ext2/3/4 file system in IMAGE.
fs_block_size () { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Block size: *//p'; }
# blocks_sectors BS FIRST [LAST]: blocks FIRST to LAST (FIRST alone
# without LAST) of BS bytes as the 512-byte sectors A-B they cover.
blocks_sectors () { echo "$(($2 * $1 / 512))-$(((${3:-$2} + 1) * $1 / 512 - 1))"; }

# fault= options giving every write to an inode table of IMAGE (dumpe2fs's
# ranges, merged, in 512-byte sectors) fault KIND from the FROM-th disk
# write on.
inode_table_faults () {
  local bs
  bs=$(fs_block_size "$1")
  dumpe2fs "$1" 2>/dev/null | sed -n 's/.*Inode table at \([0-9]*\)-\([0-9]*\).*/\1 \2/p' |
    sort -n | awk -v bs="$bs" '
      { if (n && $1 == last + 1) { last = $2; next }
        if (n) print first, last; first = $1; last = $2; n = 1 }
      END { if (n) print first, last }' |
    while read -r a b; do
      echo "--plugin-opt fault=$2:lba=$(blocks_sectors "$bs" "$a" "$b"):from=$3"
    done
}

# writes_before_mark RUN LABEL: the disk writes the plugin counted before
# the guest's MARK LABEL (the WRITE records logged before the CHANNEL
# record that carried it: a run without faults logs every write), the
# count the fault selectors nth= and from= take.
writes_before_mark () {
  local seq
  seq=$("$WTRACK" dump --channel "$T/$1/channel.bin" --log "$T/$1/writes.wtlog" |
    sed -n "s/^msg .* MARK .*\[log seq \([0-9]*\) .*\] \"$2\"\$/\1/p" | head -n 1)
  [ -n "$seq" ] || { diag "$1: no MARK \"$2\""; return 1; }
  "$WTRACK" dump "$T/$1/writes.wtlog" |
    awk -v seq="$seq" '$4 == "WRITE" && $1 < seq { n++ } END { print n + 0 }'
}

# The metadata cases need files that reach the disk's metadata (not only
# the journal) while they grow: 2 files of 1 MiB filled in 64 KiB blocks,
# syncfs after each 4 (MARK "syncfs file F at BYTES"). The ext2 and ext4
# clean runs use it too: their logs give the lost runs their write counts.
grow=(--mkfs-opts "-b 4096" --workload pwrite --files 2 --size 1M --seed 5 --fill-sync-every 4)

clean_case () {
  local name=$1; shift
  wtrack_run "$name" --disk-size 256M "$@"
  facts "$name"
  check "$name: wtrack-run exits 0" [ "$run_status" = 0 ]
  check "$name: the cold pass ran and agrees (cold verdict clean)" \
    [ "$(fact "$name" cold_ran)" = True -a "$(fact "$name" cold_verdict)" = clean ]
  check "$name: fsck of the recovered disk is clean" [ "$(fact "$name" fsck)" = clean ]
}

clean_case ext4 --fs ext4 "${grow[@]}" --ops 50
check "ext4: disk.img is unchanged by the cold pass (cold.qcow2 is an overlay)" \
  cmp -s <(qemu-img info --output=json "$T/ext4/cold.qcow2" | grep -o '"backing-filename": "[^"]*"') \
  <(echo '"backing-filename": "disk.img"')
check "ext4: report.txt has the cold verdict line" grep -q '^cold: clean: 0 of 2 files differ after a reboot' "$T/ext4/report.txt"
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
clean_case ext2 --fs ext2 "${grow[@]}" --ops 50

# Lost metadata: from 10 writes after file 2's second syncfs (inside the
# next syncfs's data writes, so a few writes' drift between two runs does
# not matter) every write to the inode tables faults: the disk keeps
# file 2 as 512 KiB. vanish (ext2) leaves no record; lie (ext4) is logged,
# and the check names the logged writes the disk lacks. The layout comes
# from the clean run's base.img (same mkfs, same size).
lost_metadata_case () {
  local name=$1 fs=$2 kind=$3 from
  from=$(writes_before_mark "$fs" "syncfs file 2 at 524288") || bail_out
  # shellcheck disable=SC2046 # one word an option
  wtrack_run "$name" --fs "$fs" --disk-size 256M \
    $(inode_table_faults "$T/$fs/base.img" "$kind" $((from + 10))) "${grow[@]}" --ops 50
  facts "$name"
  check "$name: wtrack-run exits 1" [ "$run_status" = 1 ]
  check "$name: the warm check is clean (every data sector where FIEMAP said)" \
    [ "$(fact "$name" warm_bad)" = 0 ]
  check "$name: cold, file 2 alone is damaged, its size back at 512 KiB" \
    [ "$(fact "$name" cold_files)" = /data/f2 -a "$(fact "$name" cold_size_changed)" = 1 \
      -a "$(fact "$name" cold_sizes)" = 524288 ]
  check "$name: its second half is missing after the reboot (1024 sectors)" \
    [ "$(fact "$name" cold_classes)" = missing -a "$(fact "$name" cold_bad)" = 1024 ]
  check "$name: report.txt says the size changed" \
    grep -q '^cold /data/f2: size changed: 1048576 bytes, now 524288' "$T/$name/report.txt"
  check "$name: fsck complains" [ "$(fact "$name" fsck)" = errors ]
  check "$name: the overall verdict is damaged" \
    grep -q '^verdict: damaged: 0 bad sectors; the disk after a reboot is damaged' "$T/$name/report.txt"
}
lost_metadata_case lostmeta-ext2 ext2 vanish
check "lostmeta-ext2: a vanished write is not in the log: no metadata write named" \
  [ "$(fact lostmeta-ext2 meta_lacking)" = 0 ]
lost_metadata_case lostmeta-ext4 ext4 lie
# The lied writes are logged: the last one of each inode table sector the
# disk lacks is named, and it is one the plugin lied about.
lied_named () {
  local seqs
  seqs=$(fact lostmeta-ext4 meta_lacking_seqs)
  [ -n "$seqs" ] || return 1
  for s in ${seqs//,/ }; do
    grep -q "^seq=$s .*kind=lie " "$T/lostmeta-ext4/faults.txt" || return 1
  done
}
check "lostmeta-ext4: the check names the lied inode table writes the disk lacks" lied_named
check "lostmeta-ext4: report.txt names them in the cold section" \
  grep -Eq '^metadata: [0-9]+ written sectors? outside the files differs? from (its|their) last logged write' \
  "$T/lostmeta-ext4/report.txt"
# report.html as a person sees it (the DOM after its script ran): the
# cold section names the short file, fsck's complaint and the lied writes.
html_cold_section () {
  DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --disable-gpu --no-sandbox \
    --no-first-run --user-data-dir="$T/chrome" --dump-dom "file://$T/lostmeta-ext4/report.html" \
    >"$T/lostmeta-ext4.dom" 2>"$T/chrome.err" || return 1
  /usr/bin/python3 - "$T/lostmeta-ext4.dom" "$(fact lostmeta-ext4 meta_lacking_seqs)" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
m = re.search(r'<section id="cold">(.*?)</section>', dom, re.S)
text = re.sub(r"<[^>]+>", " ", m.group(1)) if m else ""
want = ['class="coldfile">/data/f2<', "size changed: 1048576 bytes, now 524288",
        'id="fsck">fsck: errors', 'id="coldmeta">metadata: ']
want += ["the disk lacks seq %s " % s for s in sys.argv[2].split(",")]
missing = [w for w in want if w not in (m.group(1) if m else "")]
for w in missing:
    print("# not in section#cold: %s" % w)
sys.exit(1 if missing else 0)
PY
}
check "lostmeta-ext4: report.html shows the cold section (file, size, fsck, lacking writes)" \
  html_cold_section

# A lost mapping: on ext2 the pointers to a file's blocks past the 12th sit
# in its indirect block. Every write to file 2's indirect block vanishes
# while its size reaches the inode table: after the reboot the file is
# 1 MiB long with no disk blocks past its first 12 (48 KiB). The block
# comes from the clean ext2 run's disk (same mkfs, same writes: the same
# allocation).
indirect_block_fault () {
  local bs blk
  bs=$(fs_block_size "$1")
  blk=$(debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/.*(IND):\([0-9]*\).*/\1/p')
  [ -n "$bs" ] && [ -n "$blk" ] || { diag "no indirect block for $2 in $1"; return 1; }
  echo "fault=vanish:lba=$(blocks_sectors "$bs" "$blk")"
}
fault=$(indirect_block_fault "$T/ext2/disk.img" /data/f2) || bail_out
wtrack_run unmapped-ext2 --fs ext2 --disk-size 256M --plugin-opt "$fault" "${grow[@]}" --ops 50
facts unmapped-ext2
check "unmapped-ext2: wtrack-run exits 1" [ "$run_status" = 1 ]
check "unmapped-ext2: the warm check is clean" [ "$(fact unmapped-ext2 warm_bad)" = 0 ]
check "unmapped-ext2: cold, file 2 keeps its size, all past 48 KiB unmapped (1952 sectors)" \
  [ "$(fact unmapped-ext2 cold_files)" = /data/f2 -a "$(fact unmapped-ext2 cold_size_changed)" = 0 \
    -a "$(fact unmapped-ext2 cold_classes)" = unmapped -a "$(fact unmapped-ext2 cold_bad)" = 1952 ]
check "unmapped-ext2: report.txt says the file has no disk block there" \
  grep -q '^  unmapped    file offset 49152 (32 sectors): the file has no disk block there now' \
  "$T/unmapped-ext2/report.txt"

# A moved block, made by hand: in a copy of the clean ext2 run, file 1's
# first block pointer is set to a free block (never written: zeros), and
# --cold-only judges the changed disk. The cold pass reads zeros from the
# new place while the old one still holds the data: moved, both places
# named.
move_first_block () {
  local bs old new
  bs=$(fs_block_size "$1")
  old=$(debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^(0[-)][^:]*:\([0-9]*\).*/\1/p')
  new=$(debugfs -R "ffb 1 $((old + 4096))" "$1" 2>/dev/null | sed -n 's/^Free blocks found: *//p')
  [ -n "$bs" ] && [ -n "$old" ] && [ -n "$new" ] || { diag "no block to move in $1"; return 1; }
  debugfs -w -R "sif $2 block[0] $new" "$1" >/dev/null 2>&1 || return 1
  echo "$(blocks_sectors "$bs" "$new") $(blocks_sectors "$bs" "$old")"
}
cp -a --sparse=always "$T/ext2" "$T/moved-ext2"
places=$(move_first_block "$T/moved-ext2/disk.img" /data/f1) || bail_out
diag "moved-ext2: file 1's first block now at sectors ${places% *}, was ${places#* }"
moved_status=0
"$TOP/scripts/wtrack-run" --cold-only "$T/moved-ext2" >"$T/moved.out" 2>"$T/moved.err" \
  || moved_status=$?
facts moved-ext2
check "moved-ext2: --cold-only on the changed disk exits 1" [ "$moved_status" = 1 ]
check "moved-ext2: the warm check is still clean" [ "$(fact moved-ext2 warm_bad)" = 0 ]
check "moved-ext2: cold, file 1 alone, its first block (8 sectors) moved, size unchanged" \
  [ "$(fact moved-ext2 cold_files)" = /data/f1 -a "$(fact moved-ext2 cold_classes)" = moved \
    -a "$(fact moved-ext2 cold_bad)" = 8 -a "$(fact moved-ext2 cold_size_changed)" = 0 ]
check "moved-ext2: report.txt names the new and the old place, which still holds the data" \
  grep -qF "  moved       file offset 0 (8 sectors): the file system now points at disk sectors ${places% *} instead of disk sectors ${places#* } (which still hold the data)" \
  "$T/moved-ext2/report.txt"

# Lost data writes: the 10th disk write after each file's first syncfs (a
# data write, never rewritten with --ops 0) vanishes (file 1) or is lied
# about (file 2): both are reported warm as today, lost and lied, and cold
# as stale (the disk holds the pre-run content); the lied one, logged, is
# stale warm too.
k1=$(writes_before_mark ext4 "syncfs file 1 at 262144") || bail_out
k2=$(writes_before_mark ext4 "syncfs file 2 at 262144") || bail_out
wtrack_run lostdata --fs ext4 --disk-size 256M --plugin-opt fault=vanish:nth=$((k1 + 10)) \
  --plugin-opt fault=lie:nth=$((k2 + 10)) "${grow[@]}" --ops 0
facts lostdata
check "lostdata: wtrack-run exits 1" [ "$run_status" = 1 ]
check "lostdata: the warm check reports a lost and a lied page (16 sectors)" \
  [ "$(fact lostdata warm_bad)" = 16 -a "$(fact lostdata warm_classes)" = lied,lost ]
check "lostdata: the lied page is stale in report.json (\"stale\": true)" \
  [ "$(fact lostdata warm_stale)" = lied ]
check "lostdata: report.txt says stale" \
  grep -q '^  lied .*; stale: the disk holds its pre-run content, the write never replaced it' \
  "$T/lostdata/report.txt"
check "lostdata: the cold pass reports both pages stale" \
  [ "$(fact lostdata cold_bad)" = 16 -a "$(fact lostdata cold_classes)" = stale ]
check "lostdata: no metadata write is named (file sectors are the warm check's)" \
  [ "$(fact lostdata meta_lacking)" = 0 ]
done_testing
