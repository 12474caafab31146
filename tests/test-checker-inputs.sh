#!/bin/bash
# wtrack check on inputs a hostile guest (or a cut copy) bends, made by
# tests/unit/test-check-classes: an extent past the end of its file, extents
# off the disk, an empty and a truncated disk.img, extents that claim a file
# sector twice (none of these may say clean), and guest strings holding
# escape sequences and newlines (the text report must not print them raw).
. "$(dirname "$0")/lib.sh"
require_tools /usr/bin/python3 truncate
GEN=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$GEN"
plan 22

json_get () { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# run_check NAME DIR: wtrack check DIR, text in $T/NAME.txt, JSON in $T/NAME.json;
# sets rc.
run_check () {
  "$WTRACK" check "$2" --json "$T/$1.json" >"$T/$1.txt" 2>"$T/$1.err"; rc=$?
}

# An extent starting past the end of its file (fallocate KEEP_SIZE, or a
# guest's lie) used to wrap a sector count and read past the hashes.
"$GEN" --make "$T/pasteof" pasteof
run_check pasteof "$T/pasteof"
check "extent past EOF: exit 0, clean" test "$rc" = 0 -a "$(json_get "$T/pasteof.json" 'd["verdict"]')" = clean
check "extent past EOF: its file's 4 sectors compared as a hole of zeroes" \
  grep -q '^/data/f4: clean (4 sectors checked)$' "$T/pasteof.txt"

"$GEN" --make "$T/offdisk" offdisk
run_check offdisk "$T/offdisk"
check "extents off the disk: exit 2" test "$rc" = 2
check "extents off the disk: verdict unchecked, 8 unchecked sectors, inputs incomplete" \
  test "$(json_get "$T/offdisk.json" 'd["verdict"], d["unchecked_sectors"], d["files"][2]["unchecked_sectors"], d["inputs_complete"]')" = "unchecked 8 8 False"
check "extents off the disk: the text verdict is unchecked, not clean" \
  grep -q '^verdict: unchecked: 0 bad sectors; 66 sectors compared, 8 could not be$' "$T/offdisk.txt"

"$GEN" --make "$T/clean" clean
"$GEN" --make "$T/hostile" hostile
# The guest's page and block sizes (HELLO page_size, block_size): numbers in
# report.json, said in report.txt's guest line and report.html's facts; a
# guest that sent none (the hostile one, as older guests) gives null.
run_check clean "$T/clean"
"$WTRACK" check "$T/hostile" --json "$T/old.json" >/dev/null 2>&1
check "HELLO block_size: report.json guest.block_size 1024, page_size 4096; null without" \
  test "$(json_get "$T/clean.json" 'd["guest"]["block_size"], d["guest"]["page_size"]') $(json_get "$T/old.json" 'd["guest"]["block_size"], d["guest"]["page_size"]')" \
    = "1024 4096 None None"
check "HELLO block_size: report.txt's guest line says the fs's blocks" \
  grep -qx '# guest: kernel 6.1.0-test (4096-byte pages), fs ext4 (1024-byte blocks), workload classes' "$T/clean.txt"
"$WTRACK" check "$T/clean" --html "$T/clean.html" >/dev/null
check "HELLO block_size: report.html's data carries it" grep -q '"block_size": *"1024"' "$T/clean.html"
cp -r "$T/clean" "$T/empty"
truncate -s 0 "$T/empty/disk.img"
run_check empty "$T/empty"
check "empty disk.img: exit 2, verdict unchecked, image truncated" \
  test "$rc" = 2 -a "$(json_get "$T/empty.json" 'd["verdict"], d["image_truncated"], d["inputs_complete"]')" = "unchecked True False"
check "empty disk.img: only the hole's 8 zero sectors compared, 66 not" \
  test "$(json_get "$T/empty.json" 'd["compared_sectors"], d["unchecked_sectors"]')" = "8 66"
check "empty disk.img: said on a !! line" grep -q '^!! .*disk.img: 0 bytes, shorter than the 4194304-byte disk the log describes' "$T/empty.txt"

cp -r "$T/clean" "$T/short"
truncate -s 3M "$T/short/disk.img"   # f3 (disk sector 7100) is past the cut
run_check short "$T/short"
check "truncated disk.img: exit 2, verdict unchecked, f3's 8 sectors not compared" \
  test "$rc" = 2 -a "$(json_get "$T/short.json" 'd["verdict"], d["files"][2]["unchecked_sectors"], d["image_truncated"]')" = "unchecked 8 True"

# Cut only after the last extent: every sector compared, yet the image is
# not the disk the log describes.
cp -r "$T/clean" "$T/tail"
truncate -s 3900K "$T/tail/disk.img"
run_check tail "$T/tail"
check "disk.img cut past every extent: exit 2, unchecked, everything compared" \
  test "$rc" = 2 -a "$(json_get "$T/tail.json" 'd["verdict"], d["compared_sectors"], d["unchecked_sectors"]')" = "unchecked 74 0"

"$GEN" --make "$T/overlap" overlap
run_check overlap "$T/overlap"
check "overlapping extents: exit 2, unchecked, the 8 sectors claimed twice counted once" \
  test "$rc" = 2 -a "$(json_get "$T/overlap.json" 'd["verdict"], d["claimed_twice_sectors"], d["files"][0]["checked_sectors"]')" = "unchecked 8 64"
check "overlapping extents: said on a !! line" \
  grep -q '^!! /data/f1: 8 sectors (the first at file sector 8) are claimed by more than one extent' "$T/overlap.txt"

# Guest strings: no raw control byte reaches the text report, no line is
# forged, and the JSON keeps the exact strings (UTF-8 decoded; a byte that
# is not UTF-8 becomes U+FFFD).
"$GEN" --make "$T/hostile" hostile
run_check hostile "$T/hostile"
check "hostile strings: exit 1 (the damaged run)" test "$rc" = 1
check "hostile strings: no control byte but newlines in the text report" \
  test "$(LC_ALL=C grep -c -P '[\x00-\x09\x0b-\x1f\x7f]' "$T/hostile.txt")" = 0
check_fails "hostile strings: no forged !! line" grep -q '^!! forged' "$T/hostile.txt"
check "hostile strings: escaped C-style" \
  test -n "$(grep -F '/data/café\x1b[2J\xff\n!! forged f2: 1 sector lost' "$T/hostile.txt")" -a \
       -n "$(grep -F '# guest error: x\r!! forged error\x1b]0;title\x07' "$T/hostile.txt")" -a \
       -n "$(grep -F '# guest: kernel 6.1.0-\x1b[31mred\x1b[0m, fs ext4\rnot,' "$T/hostile.txt")"
check "hostile strings: the JSON holds them exactly" \
  test "$(json_get "$T/hostile.json" 'd["files"][1]["path"] == "/data/caf\u00e9\x1b[2J\ufffd\n!! forged f2" and d["guest"]["error"] == "x\r!! forged error\x1b]0;title\x07" and d["guest"]["kernel"] == "6.1.0-\x1b[31mred\x1b[0m" and d["files"][1]["pages"][0]["text"].startswith("page 0 of /data/caf\u00e9\\x1b[2J\\xff\\n!! forged")')" = True
check "ops counts from a bent RESULT: only KEY=COUNT lines, names escaped, null for a bad count" \
  test "$(json_get "$T/hostile.json" 'd["ops"] == {"list": 3, "executed": {"pw\"rite\x1b": 2}, "refused": {"reflink": 1}, "surprises": None, "pairs": {"pwrite>mwrite": 2, "pwrite>fzero": 1, "pwrite>mw\"r": 4}, "chains_wmrm": None}')" = True
check "no ops counts in a RESULT without op_list: ops is null" \
  test "$(json_get "$T/clean.json" 'd["ops"]')" = None
done_testing
