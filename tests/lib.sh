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

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# WTRACK and PLUGIN may come from the environment: tests/asan-run.sh runs
# the tests with the sanitized builds.
WTRACK=${WTRACK:-$TOP/checker/wtrack}
PLUGIN=${PLUGIN:-$TOP/plugin/nbdkit-wtrack-plugin.so}
GUEST=$TOP/guest/wtrack-guest
export PATH=$PATH:/usr/sbin:/sbin

t_count=0
t_failed=0
t_planned=""

T=$(mktemp -d "${TMPDIR:-/tmp}/wtrack-test.XXXXXX")
t_cleanup () {
  local status=$?
  for pidfile in "$T"/*.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  if [ "${KEEP_TEST_DIRS:-0}" = 1 ]; then
    echo "# kept $T" >&2
  else
    rm -rf "$T"
  fi
  exit $status
}
trap t_cleanup EXIT

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
