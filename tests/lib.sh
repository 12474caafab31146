# shellcheck shell=bash
# tests/lib.sh: TAP helpers for the shell tests (source it first).
#
#   . "$(dirname "$0")/lib.sh"
#   require_tools nbdkit qemu-io      # skip (or, under CI=true, fail) if absent
#   plan 3
#   check "replay equals the image" cmp a b
#   ok "something that was checked by hand"; not_ok "what failed"
#   done_testing                      # exit status: 1 if anything failed
#
# Variables: TOP (the repo), WTRACK, PLUGIN (both overridable from the
# environment), GUEST (built programs),
# T (a private temp dir, removed at exit unless KEEP_TEST_DIRS=1).
#
# Clean-up: whatever a test starts or makes outside $T, it registers at
# once, and lib.sh undoes it however the test ends: its last line, `exit
# N`, bail_out, skip_all, a failing command under `set -e`, or SIGINT,
# SIGTERM or SIGHUP (from prove, timeout or the user). No test sets a trap
# of its own.
#
#   on_exit COMMAND [ARGS...]         run COMMAND ARGS at exit (the words as
#                                     given, no second expansion; a shell
#                                     function for anything more)
#   on_exit kill_pid "$pid"           a process: TERM, up to 5 s, KILL, reaped
#   on_exit kill_group "$pgid"        a process group (setsid ...) the same way
#   on_exit kill_pidfile FILE         a daemon by its pid file (if it is there)
#   on_exit rm -rf "$dir"             a path
#   on_exit umount "$mnt"             anything else
#
# The steps run in reverse order of registration (a mount registered before
# the server using it is unmounted after the server stopped), each whatever
# the others did; a step that fails is reported as a `# clean-up:` comment
# and changes nothing else: the exit status stays the test's own (a failed
# test stays failed, a passing one passes: cleaning up is not what it
# tests). A test killed by a signal kills itself with that signal again
# after the clean-up, so its parent sees how it ended. lib.sh itself
# registers first the removal of $T, then a sweep of $T/*.pid (the servers
# started with a pid file there); start_nbdkit registers its server.
# Signals that arrive during the clean-up are ignored; bash runs a signal's
# trap only after a foreground command ends, so a test that waits long on
# one (a boot) stops when that command does.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# WTRACK and PLUGIN may come from the environment: tests/asan-run.sh runs
# the tests with the sanitized builds.
WTRACK=${WTRACK:-$TOP/checker/wtrack}
PLUGIN=${PLUGIN:-$TOP/plugin/nbdkit-wtrack-plugin.so}
# shellcheck disable=SC2034 # read by the tests that source this
GUEST=$TOP/guest/wtrack-guest
export PATH=$PATH:/usr/sbin:/sbin

t_count=0
t_failed=0
t_planned=""

# ---- the clean-up registry (see the header) ----------------------------

t_exit_steps=()
t_exit_signal=""

on_exit () {
  [ $# -gt 0 ] || { echo "on_exit: no command given" >&2; return 2; }
  local step
  printf -v step '%q ' "$@"
  t_exit_steps+=("$step")
}

# t_alive PID: the process runs (a zombie, dead but not yet reaped, does
# not count: kill -0 would still find it).
t_alive () {
  local stat
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}
# t_group_alive PGID: a process of that group runs.
t_group_alive () {
  local f stat
  for f in /proc/[0-9]*/stat; do
    read -r stat 2>/dev/null <"$f" || continue
    # after the command's name: state, parent, group
    [[ ${stat##*) } =~ ^([A-Za-z]+)\ [0-9]+\ ([0-9]+) ]] || continue
    [ "${BASH_REMATCH[2]}" = "$1" ] && [ "${BASH_REMATCH[1]}" != Z ] && return 0
  done
  return 1
}
# t_stop ALIVE-TEST KILL-TARGET SIGNAL: send SIGNAL until ALIVE-TEST fails,
# once a second for 5 s (a signal can be lost: one sent in the instant
# after a fork reaches the forked shell, not the command it becomes), then
# KILL and 5 s more. 0 once it is gone.
t_stop () {
  local alive=$1 target=$2 sig=$3 n
  for n in $(seq 0 199); do
    "$alive" "${target#-}" || return 0
    if [ "$n" = 100 ]; then sig=KILL; fi
    if [ $((n % 20)) = 0 ]; then kill -s "$sig" -- "$target" 2>/dev/null; fi
    sleep 0.05
  done
  ! "$alive" "${target#-}"
}

# kill_pid PID [SIGNAL]: SIGNAL (default TERM), then KILL if it still runs
# after 5 s; a child of the test is reaped. 0 when it is gone.
kill_pid () {
  t_stop t_alive "$1" "${2:-TERM}"
  local st=$?
  wait "$1" 2>/dev/null || true
  return $st
}

# kill_group PGID [SIGNAL]: the same for every process of a process group
# (a command started with setsid: its pid is the group's id).
kill_group () {
  t_stop t_group_alive "-$1" "${2:-TERM}"
  local st=$?
  wait "$1" 2>/dev/null || true
  return $st
}

# kill_pidfile FILE [SIGNAL]: kill_pid on the pid FILE holds; nothing to do
# when there is no FILE (the daemon was stopped, or never started).
kill_pidfile () {
  [ -s "$1" ] || return 0
  kill_pid "$(cat "$1")" "${2:-TERM}"
}

# kill_nbdkit_after_acks NAME ACKED N WRITER: once the file ACKED holds N
# lines (a client's acknowledged requests; 15 s at most), kills nbdkit NAME
# (start_nbdkit's) with SIGKILL while the client WRITER (a pid) has more
# requests in flight, then waits for the client to see the server die and
# for the server to be gone: until then it may still hold the ring's lock,
# and a reader would take the log as a live plugin's and leave the ring be.
kill_nbdkit_after_acks () {
  local name=$1 acked=$2 want=$3 writer=$4 pid
  for _ in $(seq 1 300); do
    [ "$( { wc -l <"$acked"; } 2>/dev/null || echo 0)" -ge "$want" ] && break
    sleep 0.05
  done
  pid=$(cat "$T/$name.pid")
  kill -KILL "$pid"
  wait "$writer"
  wait_process_gone "$pid"
  rm -f "$T/$name.pid"
}

# wait_process_gone PID: returns once PID has exited (gone, or a zombie
# with no other thread left: its files, and so its locks, are closed by
# then); 1 after 10 s. A multithreaded process's first thread turns zombie
# while the others may still be exiting, holding the shared descriptors
# (seen: a killed nbdkit's ring still locked after its leader was a zombie).
wait_process_gone () {
  local pid=$1 state threads
  for _ in $(seq 1 200); do
    # the state follows the command's name, which may hold spaces
    state=$(sed 's/.*) //; s/ .*//' "/proc/$pid/stat" 2>/dev/null) || return 0
    threads=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
    [ -n "$state" ] && { [ "$state" != Z ] || [ "$threads" -gt 1 ]; } || return 0
    sleep 0.05
  done
  echo "# process $pid still running 10 s after SIGKILL" >&2
  return 1
}

# kill_pidfiles DIR: kill_pidfile on every DIR/*.pid.
kill_pidfiles () {
  local f st=0
  for f in "$1"/*.pid; do
    [ -f "$f" ] || continue
    kill_pidfile "$f" || st=1
  done
  return $st
}

t_run_exit_steps () {
  local i step rc
  for ((i = ${#t_exit_steps[@]} - 1; i >= 0; i--)); do
    step=${t_exit_steps[i]}
    eval "$step"
    rc=$?
    [ $rc = 0 ] || echo "# clean-up: ${step% }: exit status $rc (ignored)" >&2
  done
  t_exit_steps=()
}

# The steps are the test's own shell's: a background command killed in the
# instant after its fork, before it became the command, still has the
# traps, and must not clean up the test under its feet.
t_on_exit () {
  local status=$?
  [ "$BASHPID" = $$ ] || exit "$status"
  set +eu
  trap '' INT TERM HUP
  t_run_exit_steps
  if [ -n "$t_exit_signal" ]; then
    trap - "$t_exit_signal"
    kill -s "$t_exit_signal" $$
  fi
  exit "$status"
}

# t_on_signal NAME NUMBER: leave through the EXIT trap with 128+NUMBER.
t_on_signal () {
  if [ "$BASHPID" != $$ ]; then
    trap - "$1"
    kill -s "$1" "$BASHPID"
  fi
  t_exit_signal=$1
  exit $((128 + $2))
}

trap t_on_exit EXIT
trap 't_on_signal INT 2' INT
trap 't_on_signal TERM 15' TERM
trap 't_on_signal HUP 1' HUP

T=$(mktemp -d "${TMPDIR:-/tmp}/wtrack-test.XXXXXX")
t_remove_test_dir () {
  if [ "${KEEP_TEST_DIRS:-0}" = 1 ]; then
    echo "# kept $T" >&2
  else
    rm -rf "$T"
  fi
}
on_exit t_remove_test_dir
on_exit kill_pidfiles "$T"

# nbdsh is a wrapper around python3; Debian's python3 has the nbd module,
# a python3 earlier in PATH (pyenv) may not.
nbdsh () { PATH=/usr/bin:$PATH command nbdsh "$@"; }

plan () { t_planned=$1; echo "1..$1"; }
diag () { printf '# %s\n' "$@" >&2; }
# diag_file FILE [LINES]: the last lines of FILE as comments.
diag_file () {
  [ -f "$1" ] || { diag "($1 does not exist)"; return 0; }
  diag "--- last ${2:-30} lines of $1"
  tail -n "${2:-30}" "$1" | sed 's/^/# /' >&2
}
ok () { t_count=$((t_count + 1)); echo "ok $t_count - $*"; }
not_ok () {
  t_count=$((t_count + 1)); t_failed=$((t_failed + 1))
  echo "not ok $t_count - $*"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check () {
  local desc=$1; shift
  if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# check_fails DESCRIPTION COMMAND...: ok when the command fails.
check_fails () {
  local desc=$1; shift
  if "$@"; then not_ok "$desc"; else ok "$desc"; fi
}

# Skipping is for machines that lack a tool; CI must have everything.
skip_all () {
  if [ "${CI:-}" = true ]; then
    echo "1..1"
    echo "not ok 1 - cannot run: $* (CI=true: no test may skip)"
    exit 1
  fi
  echo "1..0 # SKIP $*"
  exit 0
}
require_tools () {
  local t
  for t; do
    command -v "$t" >/dev/null 2>&1 || skip_all "missing tool: $t"
  done
}
require_built () {
  local f
  for f; do
    [ -e "$f" ] || skip_all "not built: $f (run make)"
  done
}

# bail_out: stop early after a failure the rest cannot run without.
bail_out () { exit 1; }

done_testing () {
  if [ -n "$t_planned" ] && [ "$t_planned" != "$t_count" ]; then
    echo "# planned $t_planned tests but ran $t_count" >&2
    exit 1
  fi
  [ "$t_failed" -eq 0 ]
}

# Start nbdkit in the background on a Unix socket; waits until it serves.
# start_nbdkit NAME SOCKET ARGS...   (pid in $T/NAME.pid)
start_nbdkit () {
  local name=$1 sock=$2; shift 2
  on_exit kill_pidfile "$T/$name.pid"
  nbdkit --exit-with-parent -f -P "$T/$name.pid" -U "$sock" "$@" \
    2>>"$T/$name.log" &
  local i
  for i in $(seq 1 100); do
    [ -S "$sock" ] && [ -s "$T/$name.pid" ] && return 0
    kill -0 $! 2>/dev/null || { cat "$T/$name.log" >&2; return 1; }
    sleep 0.1
  done
  echo "# nbdkit $name did not start" >&2
  return 1
}
# Stop it and wait for it to finish its unload (the log's CLOSE record).
stop_nbdkit () {
  local name=$1 pid
  pid=$(cat "$T/$name.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$T/$name.pid"
}

# replay_killed_log LOG BASE OUT: wtrack replay of the log a killed nbdkit
# left, judged by replay's own verdict, not by OUT's existence: exit 0 for
# an unclosed log, 2 for a torn one, and every record wtrack dump reads
# applied (replay --verbose says "up to seq" the dump's last seq).
replay_killed_log () {
  local log=$1 base=$2 out=$3 end last rc
  end=$("$WTRACK" dump --json "$log" 2>/dev/null | jq -r 'select(.end) | .end')
  last=$("$WTRACK" dump --json "$log" 2>/dev/null | jq -s '[.[] | select(.seq)][-1].seq')
  "$WTRACK" replay --verbose "$log" --base "$base" --out "$out" 2>"$out.err"
  rc=$?
  diag "replay of the $end log (last seq $last): exit $rc, $(tail -n 1 "$out.err")"
  case "$end/$rc" in
    unclosed/0 | torn/2) ;;
    *) return 1 ;;
  esac
  grep -q " up to seq $last: " "$out.err"
}
