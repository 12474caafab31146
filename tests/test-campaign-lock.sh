#!/bin/bash
# test-campaign-lock: one campaign folder, one campaign at a time, and a
# --resume that answers for the options it is given. Real cells (the built
# test kernel, 16 MiB linus2006, no cold pass, 2 cells at once): a second
# run and a collect into a running campaign's folder refuse, naming its pid;
# after kill -9 of the driver while its cells still run, --resume refuses
# (naming the dead pid and the cells) until they end, and never runs a cell
# beside them; a stale logs/*.sid naming an unrelated process is not
# signalled when a later campaign is stopped; --resume with a changed
# option on a finished campaign runs every cell again with it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
require_tools qemu-system-x86_64 nbdkit mkfs.ext4 jq setsid flock pgrep
require_built "$WTRACK" "$PLUGIN" "$GUEST"
plan 16

C=$TOP/scripts/wtrack-campaign
kernel=$("$TOP/scripts/build-kernel" 2>"$T/build.err") || { cat "$T/build.err" >&2; bail_out; }
out=$T/camp
opts=(--kernels "$kernel" --seeds 1-2 --set size=16M --set disk-size=256M --set accel=tcg
      --set no-cold=true --jobs 2 --out "$out")
cells_running () { pgrep -f "$out/cells/" >/dev/null; }
# wait_for N: until N cells have a session file (they run), at most 60 s
wait_for () {
  local i
  for i in $(seq 1 600); do
    [ "$(ls "$out"/logs/*.sid 2>/dev/null | wc -l)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# ---- two campaigns into one folder: the second refuses -------------------
"$C" run "${opts[@]}" >"$T/a.out" 2>"$T/a.err" &
a=$!
on_exit kill_pid "$a"
wait_for 2 || { diag_file "$T/a.err"; bail_out; }
rc=0; "$C" run "${opts[@]}" >/dev/null 2>"$T/b.err" || rc=$?
diag "$(cat "$T/b.err")"
check "a second run into a running campaign's folder: exit 2, naming the holder's pid $a" \
  [ "$rc" = 2 -a -n "$(grep -F "in use by wtrack-campaign pid $a " "$T/b.err")" ]
rc=0; "$C" collect "$out" >/dev/null 2>"$T/c.err" || rc=$?
check "collect of a running campaign: exit 2, naming the pid" \
  [ "$rc" = 2 -a -n "$(grep -F "pid $a " "$T/c.err")" ]
check "the first campaign's cells still run, their folders in place" \
  eval "cells_running && [ \$(ls -d '$out'/cells/* | wc -l) = 2 ]"

# ---- kill -9 of the driver while its cells run ----------------------------
kill -KILL "$a"
wait "$a" 2>/dev/null || true
stat -c '%n %i' "$out"/cells/* >"$T/cells.before"
rc=0; "$C" run "${opts[@]}" --resume >/dev/null 2>"$T/r.err" || rc=$?
diag "$(cat "$T/r.err")"
check "--resume while the dead driver's cells run: exit 2, naming the dead pid $a" \
  [ "$rc" = 2 -a -n "$(grep -F "(pid $a) is gone" "$T/r.err")" ]
check "... and the cells still running" grep -q 'cells still running' "$T/r.err"
check "the refused --resume left the running cells' folders alone" \
  cmp -s "$T/cells.before" <(stat -c '%n %i' "$out"/cells/*)
# the orphans finish on their own, and write their results. A cell's own
# last steps (jq on its report, mv of its log, cell.ini) name its folder
# too, so the cells are over once both cell.ini files are there and no
# process names a cell's folder two looks in a row (a look between
# wtrack-run's end and those steps once took the cells for ended)
cells_written () { [ "$(ls "$out"/cells/*/cell.ini 2>/dev/null | wc -l)" = 2 ]; }
quiet=0
for _ in $(seq 1 600); do
  if cells_written && ! cells_running; then
    quiet=$((quiet + 1)); [ "$quiet" -lt 2 ] || break
  else
    quiet=0
  fi
  sleep 0.5
done
check "the orphaned cells ended by themselves" eval '! cells_running'
check "each wrote its cell.ini (with its arguments)" \
  [ "$(grep -l '^args=--fs' "$out"/cells/*/cell.ini | wc -l)" = 2 ]
rc=0; "$C" run "${opts[@]}" --resume >/dev/null 2>"$T/r2.err" || rc=$?
check "--resume once they ended: nothing to run, exit 0 (2 clean)" \
  [ "$rc" = 0 -a -n "$(grep '2 cells, 0 to run' "$T/r2.err")" -a "$(jq .counts.clean "$out/summary.json")" = 2 ]

# ---- --resume with a changed option: every cell again, with it ------------
fault=plugin-opt=fault=vanish:p=0.05:seed=3
rc=0; "$C" run "${opts[@]}" --resume --set "$fault" >/dev/null 2>"$T/f.err" || rc=$?
sed 's/^/#   /' "$T/f.err" >&2
check "--resume --set $fault: says 2 cells run again for other arguments" \
  grep -q -- '--resume: 2 cell(s) to run: ran with other arguments' "$T/f.err"
check "every cell's cell.ini and wtrack-run.log carry the fault option" \
  [ "$(grep -l 'fault=vanish:p=0.05:seed=3' "$out"/cells/*/cell.ini | wc -l)" = 2 \
    -a "$(grep -l 'fault=vanish:p=0.05:seed=3' "$out"/cells/*/wtrack-run.log | wc -l)" = 2 ]
check "no cell is reported with the old arguments (no clean cell; exit $rc is not 0)" \
  [ "$rc" != 0 -a "$(jq '[.cells[] | select(.status == "clean")] | length' "$out/summary.json")" = 0 ]

# ---- a stale session file naming an unrelated process ---------------------
setsid sleep 600 </dev/null >/dev/null 2>&1 &
ghost=$!
on_exit kill_pid "$ghost"
echo "$ghost bookworm.ext4.linus2006.s1.1700000000000000000.4242" >"$out/logs/ghost.sid"
"$C" run "${opts[@]}" --resume --set plugin-opt=fault=vanish:p=0.1:seed=4 \
  >/dev/null 2>"$T/g.err" &
g=$!
on_exit kill_pid "$g"
wait_for 3 || diag_file "$T/g.err"
kill -TERM "$g"
rc=0; wait "$g" || rc=$?
check "the campaign stopped by TERM: exit 143" [ "$rc" = 143 ]
check "its cells are gone" eval '! cells_running'
check "the unrelated process named by a stale .sid was not signalled" kill -0 "$ghost"
rc=0; "$C" collect "$out" >/dev/null 2>&1 || rc=$?
check "collect of the stopped campaign: exit 2, its cells errors ('interrupted')" \
  [ "$rc" = 2 -a "$(jq '[.cells[] | select(.error // "" | test("interrupted"))] | length' "$out/summary.json")" = 2 ]
done_testing
