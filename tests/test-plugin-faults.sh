#!/bin/bash
# Fault injection: each kind does what it says to the image and the log, the
# ground-truth file names it, selectors pick the right requests, and the
# same seed gives the same faults.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit nbdsh jq cmp
require_built "$PLUGIN" "$WTRACK"
plan 27

head -c 16M /dev/urandom >"$T/base.img"

# run_faults NAME WRITES FAULT-OPTIONS...: a fresh disk, nbdkit with those
# options, and one connection writing WRITES ("OFFSET:LENGTH:BYTE ...") in
# order; $T/NAME.result gets "ok" or the errno name per write.
run_faults () {
  local name=$1 writes=$2; shift 2
  cp "$T/base.img" "$T/$name.img"
  start_nbdkit "$name" "$T/$name.sock" "$PLUGIN" "$T/$name.img" \
    log="$T/$name.wtlog" data=on faults="$T/$name.faults" "$@" || return 1
  WRITES=$writes RESULT=$T/$name.result nbdsh -u "nbd+unix:///?socket=$T/$name.sock" -c '
import errno, os
out = open(os.environ["RESULT"], "w")
for w in os.environ["WRITES"].split():
    off, length, byte = (int(x, 0) for x in w.split(":"))
    try:
        h.pwrite(bytes([byte]) * length, off)
        out.write("ok\n")
    except nbd.Error as e:
        out.write("%s\n" % errno.errorcode.get(e.errno, e.errno))
'
  local status=$?
  stop_nbdkit "$name"
  "$WTRACK" dump --json "$T/$name.wtlog" | jq -c 'select(.seq)' >"$T/$name.json"
  return $status
}

# same_bytes IMAGE-A IMAGE-B OFFSET LENGTH
same_bytes () {
  cmp -s -i "$3:$3" -n "$4" "$1" "$2"
}
# filled IMAGE OFFSET LENGTH BYTE: every byte of the range is BYTE.
filled () {
  /usr/bin/python3 -c '
import sys
f = open(sys.argv[1], "rb"); f.seek(int(sys.argv[2]))
sys.exit(f.read(int(sys.argv[3])) != bytes([int(sys.argv[4], 0)]) * int(sys.argv[3]))
' "$@"
}
logged_at () {
  jq -s "[.[] | select(.type == \"WRITE\" and .offset == $2)] | length" "$T/$1.json"
}

three="65536:4096:0x11 131072:4096:0x22 196608:4096:0x33"

# vanish: acknowledged, neither stored nor logged.
run_faults vanish "$three" fault=vanish:nth=2
check "vanish: every write acknowledged" test "$(sort -u "$T/vanish.result")" = ok
check "vanish: the ground truth names it, without a seq but after the seq before it" \
  test "$(cat "$T/vanish.faults")" = \
       "seq=- after_seq=2 req=2 kind=vanish offset=131072 length=4096 sectors=256-263 sectors_not_stored=256-263"
check "vanish: the log lacks it, has the others" \
  test "$(logged_at vanish 131072)$(logged_at vanish 65536)$(logged_at vanish 196608)" = 011
check "vanish: the image lacks it" same_bytes "$T/vanish.img" "$T/base.img" 131072 4096
check "vanish: the image has the others" filled "$T/vanish.img" 196608 4096 0x33

# lie: acknowledged and logged, not stored.
run_faults lie "$three" fault=lie:lba=384-384
lie_seq=$(jq -s '.[] | select(.type == "WRITE" and .offset == 196608) | .seq' "$T/lie.json")
check "lie: every write acknowledged" test "$(sort -u "$T/lie.result")" = ok
check "lie: the log has it" test "$(logged_at lie 196608)" = 1
check "lie: the ground truth names it with its seq" \
  test "$(cat "$T/lie.faults")" = \
       "seq=$lie_seq req=3 kind=lie offset=196608 length=4096 sectors=384-391 sectors_not_stored=384-391"
check "lie: the image lacks it" same_bytes "$T/lie.img" "$T/base.img" 196608 4096
check "lie: the image has the others" filled "$T/lie.img" 65536 4096 0x11
"$WTRACK" verify "$T/lie.wtlog" "$T/lie.img" >/dev/null 2>&1
check "lie: wtrack verify sees the sectors differ (exit 1)" test $? -eq 1

# tear: some sectors stored, all logged.
run_faults tear "1048576:65536:0x44" fault=tear:nth=1:seed=7
check "tear: acknowledged" test "$(cat "$T/tear.result")" = ok
check "tear: logged with all 128 hashes" \
  test "$(jq -s '[.[] | select(.type == "WRITE") | .hashes | length]' -c "$T/tear.json")" = '[128]'
check "tear: exactly the sectors the ground truth lists are not stored" \
  /usr/bin/python3 -c '
import sys
line = open(sys.argv[1]).read().split()
fields = dict(f.split("=", 1) for f in line)
lost = set()
for run in fields["sectors_not_stored"].split(","):
    a, b = map(int, run.split("-"))
    lost.update(range(a, b + 1))
img, base = open(sys.argv[2], "rb"), open(sys.argv[3], "rb")
bad = 0
for s in range(2048, 2176):
    img.seek(s * 512); base.seek(s * 512)
    got = img.read(512)
    want = base.read(512) if s in lost else b"\x44" * 512
    bad += got != want
print("# %d sectors not stored, %d wrong" % (len(lost), bad), file=sys.stderr)
sys.exit(bad != 0 or not 0 < len(lost) < 128)
' "$T/tear.faults" "$T/tear.img" "$T/base.img"

# eio: the client sees EIO, the log a FAILED record, the image nothing.
run_faults eio "$three" fault=eio:nth=1
check "eio: the client sees EIO, then success" \
  test "$(paste -sd' ' "$T/eio.result")" = "EIO ok ok"
check "eio: a FAILED WRITE record with err EIO, no hashes" \
  test "$(jq -s -c '[.[] | select(.type == "WRITE" and .offset == 65536) | [.flags, .err_name, (.hashes | length)]]' "$T/eio.json")" \
       = '[[["FAILED"],"EIO",0]]'
check "eio: the image lacks it" same_bytes "$T/eio.img" "$T/base.img" 65536 4096
check "eio: the ground truth names it" grep -q '^seq=[0-9]* req=1 kind=eio offset=65536 ' "$T/eio.faults"
check "eio: wtrack verify is clean (a failed write promises nothing)" \
  "$WTRACK" verify "$T/eio.wtlog" "$T/eio.img"

# Selectors: every=2 with count=3 fails writes 2, 4 and 6 of 10.
ten=$(for i in $(seq 0 9); do printf '%d:4096:%d ' $((i * 8192)) $((i + 1)); done)
run_faults every "$ten" fault=eio:every=2:count=3
check "every=2 count=3: writes 2, 4, 6 fail" \
  test "$(paste -sd' ' "$T/every.result")" = "ok EIO ok EIO ok EIO ok ok ok ok"
check "every=2 count=3: three lines of ground truth" \
  test "$(grep -c 'kind=eio' "$T/every.faults")" = 3

# from=N: a trigger by write count, the N-th write on; with lba= and count=
# it picks the writes to a place after a point of the run. Rules: writes 4
# on that touch sectors 0-63 (writes 1-4), then writes 9 on.
run_faults from "$ten" fault=eio:from=4:lba=0-63 fault=eio:from=9
check "from=4 with lba=0-63, from=9: writes 4, 9 and 10 fail" \
  test "$(paste -sd' ' "$T/from.result")" = "ok ok ok EIO ok ok ok ok EIO EIO"
check "from: the ground truth names requests 4, 9 and 10" \
  test "$(sed -n 's/.* req=\([0-9]*\) kind=eio .*/\1/p' "$T/from.faults" | paste -sd' ')" = "4 9 10"

# Same seed, same faults; another seed, other faults.
forty=$(for i in $(seq 0 39); do printf '%d:8192:%d ' $((i * 16384)) $((i + 1)); done)
rules=(fault=tear:p=0.4:seed=42 fault=lie:p=0.3:seed=9)
run_faults seed1 "$forty" "${rules[@]}"
run_faults seed2 "$forty" "${rules[@]}"
run_faults seed3 "$forty" fault=tear:p=0.4:seed=43 fault=lie:p=0.3:seed=9
check "seed: some faults fired" test "$(wc -l <"$T/seed1.faults")" -ge 3
check "seed: same seed, same ground truth" cmp "$T/seed1.faults" "$T/seed2.faults"
check "seed: same seed, same image" cmp "$T/seed1.img" "$T/seed2.img"
differ () { ! cmp -s "$1" "$2"; }
check "seed: another seed, other faults" differ "$T/seed1.faults" "$T/seed3.faults"
done_testing
