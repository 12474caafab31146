#!/bin/bash
# wtrack dump: logs from the real plugin (written through qemu-io) and from
# the generator, whole, torn and corrupt; channels, whole and corrupt.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit qemu-io truncate /usr/bin/python3
GEN=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$PLUGIN" "$GEN"
plan 20

json_ok () { /usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' ; }
# The byte offset of the last record, from the JSON dump.
last_offset () {
  "$WTRACK" dump --json "$1" | /usr/bin/python3 -c '
import json,sys
recs=[json.loads(l) for l in sys.stdin if "\"seq\"" in l]
print(recs[-1]["log_offset"], recs[-1]["seq"], len(recs))'
}

# The real plugin: two writes, one FUA, through qemu-io.
truncate -s 16M "$T/disk.img"
start_nbdkit wt "$T/sock" "$PLUGIN" "$T/disk.img" log="$T/writes.wtlog"
qemu-io -f raw -t writeback "nbd+unix:///?socket=$T/sock" -c 'write -P 1 0 4k' \
  -c 'write -P 2 -f 8k 4k' >"$T/qemu-io.out" 2>&1
stop_nbdkit wt
"$WTRACK" dump "$T/writes.wtlog" >"$T/plugin.txt"; rc=$?
check "plugin log: dump exits 0" [ "$rc" = 0 ]
check "plugin log: header line names the disk size" grep -q '^# wtlog v1 disk=16777216 ' "$T/plugin.txt"
# The default mode's queue applies each write onto the image and logs it
# without its bytes: flag APPLIED (doc/formats.md).
check "plugin log: the 4 KiB write at 0 with 8 hashes, applied by the queue" \
  grep -Eq '^ +[0-9]+ +[0-9.]+ +[0-9.]+ WRITE +APPLIED +[0-9]+ +0 +4096 [0-9a-f]{16} 8$' "$T/plugin.txt"
check "plugin log: the FUA write at 8192" grep -Eq ' WRITE +FUA,APPLIED +[0-9]+ +8192 +4096 ' "$T/plugin.txt"
check "plugin log: ends closed" grep -q '^# end: closed' "$T/plugin.txt"
check "plugin log: verify against the image is clean" "$WTRACK" verify "$T/writes.wtlog" "$T/disk.img"
check "plugin log: --json lines all parse" json_ok < <("$WTRACK" dump --json "$T/writes.wtlog")

# Cut the real log inside its last record.
read -r off seq n < <(last_offset "$T/writes.wtlog")
cp "$T/writes.wtlog" "$T/cut.wtlog"
truncate -s $((off + 20)) "$T/cut.wtlog"
"$WTRACK" dump "$T/cut.wtlog" >"$T/cut.txt" 2>/dev/null; rc=$?
check "cut plugin log: dump exits 2" [ "$rc" = 2 ]
check "cut plugin log: names byte $off after seq $((seq - 1))" \
  grep -q "^# torn tail at byte $off after seq $((seq - 1)):" "$T/cut.txt"
check "cut plugin log: every complete record is printed ($((n - 1)))" \
  test "$(grep -c '^  ' "$T/cut.txt")" = $((n - 1))

# The generator's log: 25 records; flip a byte in record 9.
mkdir -p "$T/gen"
"$GEN" --make "$T/gen/run" damaged
L=$T/gen/run/writes.wtlog
"$WTRACK" dump "$L" >"$T/gen.txt"; rc=$?
check "generated log: 25 records, closed, exit 0" \
  test "$rc" = 0 -a "$(grep -c '^  ' "$T/gen.txt")" = 25 -a -n "$(grep '^# end: closed' "$T/gen.txt")"
rec9=$("$WTRACK" dump --json "$L" | /usr/bin/python3 -c '
import json,sys
print([json.loads(l) for l in sys.stdin if "\"seq\": 9," in l.replace(":",": ")][0]["log_offset"])')
cp "$L" "$T/flip.wtlog"
printf '\x5a' | dd of="$T/flip.wtlog" bs=1 seek=$((rec9 + 70)) conv=notrunc status=none
"$WTRACK" dump "$T/flip.wtlog" >"$T/flip.txt" 2>/dev/null; rc=$?
check "flipped byte: exit 2, torn at record 9's byte $rec9" \
  test "$rc" = 2 -a -n "$(grep "^# torn tail at byte $rec9 after seq 8: .*checksum" "$T/flip.txt")"
check "flipped byte: the 8 records before it are printed" test "$(grep -c '^  ' "$T/flip.txt")" = 8
end=$("$WTRACK" dump --json "$T/flip.wtlog" 2>/dev/null | tail -n 1)
check "flipped byte: JSON end line says torn at $rec9" \
  /usr/bin/python3 -c "import json,sys; e=json.loads(sys.argv[1]); sys.exit(not (e['end']=='torn' and e['bad_offset']==$rec9 and e['last_seq']==8))" "$end"

# Channels.
C=$T/gen/run/channel.bin
"$WTRACK" dump --channel "$C" --log "$L" >"$T/chan.txt"; rc=$?
check "channel: dump exits 0" [ "$rc" = 0 ]
check "channel: HELLO text and the start MARK" \
  test -n "$(grep '^    kernel=6.1.0-test' "$T/chan.txt")" -a -n "$(grep -E '^msg 2 .*MARK .*"start"' "$T/chan.txt")"
check "channel: messages placed at their CHANNEL records" grep -Eq '^msg 2 .*\[log seq 3 t=1\.002000\]' "$T/chan.txt"
check "channel: the final manifest summarised with its 3 files" \
  test -n "$(grep '^manifest 1: checkpoint 0 (final), 3 files' "$T/chan.txt")" -a -n "$(grep '^  file /data/f2 id=2 .*size=700 sectors=2' "$T/chan.txt")"
# Message 3 starts at byte 1024: damage its payload.
cp "$C" "$T/badchan.bin"
printf '\x00' | dd of="$T/badchan.bin" bs=1 seek=$((1024 + 40)) conv=notrunc status=none
"$WTRACK" dump --channel "$T/badchan.bin" >"$T/badchan.txt" 2>&1; rc=$?
check "bad channel: exit 2 naming message 3 at byte 1024" \
  test "$rc" = 2 -a -n "$(grep 'bad message 3 at byte 1024' "$T/badchan.txt")"
check "bad channel: messages 1 and 2 printed first" \
  test "$(grep -c '^msg ' "$T/badchan.txt")" = 2
done_testing
