#!/bin/bash
# A hostile environment around a run: the run directory's file system fills
# up (tmpfs of 1, 12, 16 and 40 MiB), nbdkit or QEMU is killed under the
# run, and the run itself gets SIGTERM, SIGINT or SIGHUP during the boot
# and during the cold pass. Each ends at once with exit 3 (or 128+signal),
# one message naming the cause, and no process left; after nbdkit's death
# the advice printed leads to a checked report.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-run.sh"
require_tools mount umount pgrep /usr/bin/python3
[ "$(id -u)" = 0 ] || skip_all "mounting a tmpfs needs root"
plan 48

RUN=$TOP/scripts/wtrack-run
WORK=(--accel tcg --workload linus2006 --size 16M --timeout 120)

# start_run NAME [options]: wtrack-run into $T/NAME (or run_out when set)
# in the background, its output in $T/NAME.out and .err, its pid in run_pid; SIGINT back to its default (a background command of a
# script starts with it ignored, and bash cannot trap a signal ignored at
# its start), as a terminal's Ctrl-C would find it
start_run () {
  local name=$1; shift
  /usr/bin/python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$RUN" --out "${run_out:-$T/$name}" "$@" >"$T/$name.out" 2>"$T/$name.err" &
  run_pid=$!
  on_exit kill_pid "$run_pid"
  run_start=$SECONDS
}

# wait_run: its exit status into run_status, seconds into run_secs
wait_run () {
  run_status=0
  wait "$run_pid" || run_status=$?
  run_secs=$((SECONDS - run_start))
}

# wait_for FILE [SECONDS]: until FILE is there and not empty
wait_for () {
  local i
  for ((i = 0; i < ${2:-60} * 10; i++)); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# pids_of NAME: the pids the run recorded (nbdkit's and both QEMUs'), read
# while they are there (QEMU removes its pid file when it exits)
pids_seen=""
note_pids () {
  local f
  for f in "$T/$1"/nbdkit.pid "$T/$1"/qemu.pid "$T/$1"/cold-qemu.pid; do
    [ -s "$f" ] && pids_seen+=" $(cat "$f")"
  done
  return 0
}

# check_no_process NAME: no recorded pid alive, no process with the run
# directory on its command line
check_no_process () {
  local p alive="" left
  for p in $pids_seen; do
    kill -0 "$p" 2>/dev/null && alive+=" $p"
  done
  left=$(pgrep -f "$T/$1/" || true)
  if [ -z "$alive" ] && [ -z "$left" ]; then ok "$1: no process left"
  else
    not_ok "$1: processes left:$alive $left"
    pgrep -af "$T/$1/" | sed 's/^/#   /' >&2
  fi
  pids_seen=""
}

# ---- the run directory's file system fills up ---------------------------

full_disk_case () {
  local mib=$1 mnt=$T/tmpfs-$1 name=full-$1
  mkdir -p "$mnt"
  mount -t tmpfs -o "size=${mib}M" tmpfs "$mnt" || { not_ok "mount a tmpfs of $mib MiB"; return; }
  on_exit umount "$mnt"
  run_out=$mnt/run start_run "$name" --no-cold "${WORK[@]}"
  while kill -0 "$run_pid" 2>/dev/null; do note_pids "tmpfs-$mib/run"; sleep 0.2; done
  wait_run
  diag_file "$T/$name.err" 4
  check "full at $mib MiB: exit 3 (got $run_status)" [ "$run_status" = 3 ]
  check "full at $mib MiB: within 30 s (${run_secs} s)" [ "$run_secs" -le 30 ]
  check "full at $mib MiB: the error names the full file system" \
    grep -q "the file system holding $mnt/run is full (tmpfs on $mnt" "$T/$name.err"
  check_no_process "tmpfs-$mib/run"
}
for mib in 1 12 16 40; do full_disk_case "$mib"; done

# ---- nbdkit killed under the run -----------------------------------------

# 64 MiB: the workload writes for seconds after it says it is running
start_run nbdkill --no-cold "${WORK[@]}" --size 64M
wait_for "$T/nbdkill/console.log"
for _ in $(seq 1 300); do grep -q 'running:' "$T/nbdkill/console.log" && break; sleep 0.1; done
note_pids nbdkill
sleep 0.3
kill -KILL "$(cat "$T/nbdkill/nbdkit.pid")"
wait_run
diag_file "$T/nbdkill.err" 8
check "nbdkit killed: exit 3 (got $run_status)" [ "$run_status" = 3 ]
check "nbdkit killed: the error names the server's death" \
  grep -q 'nbdkit (pid [0-9]*, the disk.s server) died during the run: killed by SIGKILL' "$T/nbdkill.err"
check_no_process nbdkill
"$WTRACK" check "$T/nbdkill" >/dev/null 2>"$T/nbdkill.check0"
check "the unapplied disk.img is still refused (exit 2)" [ $? = 2 ]
# the advice: the lines after "can still be checked", run as printed
sed -n '/can still be checked/,/^wtrack-run:/p' "$T/nbdkill.err" | grep '^  /' >"$T/advice"
check "the advice gives two commands, replay then check" \
  grep -q 'wtrack replay.*wtrack check' <(tr '\n' ' ' <"$T/advice")
advice_status=0
while read -r -a cmd; do
  "${cmd[@]}" >"$T/advice.out" 2>"$T/advice.err" || { advice_status=$?; break; }
done <"$T/advice"
diag_file "$T/advice.err" 3
check "following the advice gives a checked report (exit 0 or 1, got $advice_status)" \
  [ "$advice_status" -le 1 ]
check "the report is a verdict on the disk" grep -q '^disk: ' "$T/advice.out"

# ---- QEMU killed under the run (as the OOM killer would) -----------------

start_run qemukill --no-cold "${WORK[@]}"
wait_for "$T/qemukill/qemu.pid"
note_pids qemukill
sleep 2
kill -KILL "$(cat "$T/qemukill/qemu.pid")"
wait_run
diag_file "$T/qemukill.err" 3
check "QEMU killed: exit 3 (got $run_status)" [ "$run_status" = 3 ]
check "QEMU killed: said as a kill by SIGKILL, not as a timeout" \
  grep -q 'qemu (qemu) was killed by SIGKILL after [0-9]* s (not by wtrack-run' "$T/qemukill.err"
check_no_process qemukill

# ---- the guest meets I/O errors: its RESULT says so, the run fails ------

start_run eio --no-cold "${WORK[@]}" --plugin-opt fault=eio:p=0.01:seed=1
wait_run
diag_file "$T/eio.err" 2
check "I/O errors in the guest: exit 3 (got $run_status)" [ "$run_status" = 3 ]
check "I/O errors in the guest: the error says the guest failed on one" \
  grep -q '^wtrack-run: the guest failed: .*Input/output error' "$T/eio.err"
"$WTRACK" dump --channel "$T/eio/channel.bin" >"$T/eio.dump" 2>&1
check "I/O errors in the guest: its RESULT has a non-zero status" grep -Eq '^ +status=[1-9]' "$T/eio.dump"
check "I/O errors in the guest: its RESULT counts the kernel's I/O errors" \
  grep -Eq '^ +io_errors=[1-9]' "$T/eio.dump"

# ---- signals to the run: during the boot and during the cold pass -------

signal_case () {
  local sig=$1 status=$2 phase=$3 pidfile name=sig-$1-$3
  pidfile=$T/$name/qemu.pid
  [ "$phase" = boot ] || pidfile=$T/$name/cold-qemu.pid
  start_run "$name" "${WORK[@]}"
  wait_for "$pidfile" 120
  note_pids "$name"
  kill -s "$sig" "$run_pid"
  wait_run
  diag_file "$T/$name.err" 2
  check "SIG$sig during the $phase: exit $status (got $run_status)" [ "$run_status" = "$status" ]
  check "SIG$sig during the $phase: one line says so" \
    grep -q "^wtrack-run: stopped by SIG$sig during the $phase phase" "$T/$name.err"
  check_no_process "$name"
}
signal_case TERM 143 boot
signal_case INT 130 boot
signal_case HUP 129 boot
signal_case TERM 143 cold
signal_case INT 130 cold
signal_case HUP 129 cold

done_testing
