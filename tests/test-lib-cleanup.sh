#!/bin/bash
# tests/lib.sh's clean-up registry, on every way a test can end: a child
# test registers a process, a process group, a daemon by its pid file, a
# server in $T/*.pid, a temporary folder, a step that fails and two that
# note their order; then it passes, exits 1, fails a check, bails out,
# fails under set -e, or is killed with TERM, INT or HUP. Each time every
# process is gone, every path removed, the steps ran last registered first
# (the failing one stopping none; a second signal stopping none), and the
# exit status is the child's own.
. "$(dirname "$0")/lib.sh"
require_tools setsid env
plan 22

cat >"$T/child.sh" <<'CHILD'
#!/bin/bash
# child.sh MODE STATE: STATE is where it leaves what the runner looks at.
mode=$1 state=$2
. "$TOP_UNDER_TEST/tests/lib.sh"
echo "$T" >"$state/T"
note () { echo "$1" >>"$state/order"; }
on_exit note first
sleep 300 >/dev/null 2>&1 &
echo $! >"$state/child.pid"
on_exit kill_pid "$(cat "$state/child.pid")"
setsid sh -c 'sleep 300 & exec sleep 300' >/dev/null 2>&1 &
echo $! >"$state/group.id"
on_exit kill_group "$(cat "$state/group.id")"
# a daemon: not the test's child, known only by its pid file
sh -c 'sleep 300 >/dev/null 2>&1 & echo $! >"$1"' sh "$state/daemon.pid"
on_exit kill_pidfile "$state/daemon.pid"
# a server with its pid file in $T: lib.sh's own sweep stops it
sleep 300 >/dev/null 2>&1 &
echo $! >"$T/server.pid"
cp "$T/server.pid" "$state/server.pid"
on_exit false
tmp=$(mktemp -d "$state/tmp.XXXXXX")
echo "$tmp" >"$state/tmp"
on_exit rm -rf "$tmp"
on_exit note last
# twice: the runner signals again while this step runs
[ "$mode" != twice ] || on_exit eval ': >"$state/cleaning"; sleep 1'
# All started? (else "gone" below would prove nothing.)
sleep 0.2
kill -0 "$(cat "$state/child.pid")" && kill -0 -- "-$(cat "$state/group.id")" &&
  kill -0 "$(cat "$state/daemon.pid")" && kill -0 "$(cat "$state/server.pid")" &&
  [ -d "$tmp" ] && [ -d "$T" ] && : >"$state/started"
plan 1
case $mode in
  pass) ok "passes" ;;
  exit1) exit 1 ;;
  check) check "a check that fails" false ;;
  bail) bail_out ;;
  set-e) set -e; false; ok "not reached" ;;
  signal|twice) : >"$state/waiting"; wait "$(cat "$state/child.pid")" ;;
esac
done_testing
CHILD

# run_child NAME MODE [SIGNAL]: run the child in $T/NAME, with its status in
# $status; SIGNAL is sent to the child (alone) while it waits, and in mode
# twice once more while it cleans up.
status=0
run_child () {
  local name=$1 mode=$2 sig=${3:-} state=$T/$1 pid n
  mkdir "$state"
  # env --default-signal: a background job of a script starts with SIGINT
  # ignored, which no trap could undo; prove's tests do not.
  TOP_UNDER_TEST=$TOP TMPDIR=$state env --default-signal=INT,TERM,HUP \
    bash "$T/child.sh" "$mode" "$state" >"$state/out" 2>"$state/err" &
  pid=$!
  on_exit kill_pid "$pid" KILL
  if [ -n "$sig" ]; then
    for n in $(seq 1 200); do [ -e "$state/waiting" ] && break; sleep 0.05; done
    kill -s "$sig" "$pid"
  fi
  if [ "$mode" = twice ]; then
    for n in $(seq 1 200); do [ -e "$state/cleaning" ] && break; sleep 0.05; done
    kill -s "$sig" "$pid"
  fi
  status=0
  wait "$pid" || status=$?
}

# running PID / group_running PGID: seen by ps (not through lib.sh), a
# zombie (dead, not reaped yet) does not count.
running () { ps -o stat= -p "$1" | grep -vq '^Z'; }
group_running () {
  ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'
}
# soon_gone COMMAND ARG: COMMAND ARG fails within 2 s.
soon_gone () {
  local n
  for n in $(seq 1 40); do "$1" "$2" || return 0; sleep 0.05; done
  return 1
}

# gone NAME: every process the child started has gone, every path it made
# is removed, and its steps ran in reverse order; why not, as comments.
gone () {
  local state=$T/$1 p why=""
  [ -e "$state/started" ] || why+=" (not all started)"
  for p in child daemon server; do
    soon_gone running "$(cat "$state/$p.pid")" || why+=" $p-still-running"
  done
  soon_gone group_running "$(cat "$state/group.id")" || why+=" group-still-running"
  [ ! -e "$(cat "$state/tmp")" ] || why+=" tmp-path-left"
  [ ! -e "$(cat "$state/T")" ] || why+=" T-left"
  [ "$(paste -sd, "$state/order" 2>/dev/null)" = last,first ] ||
    why+=" order:$(paste -sd, "$state/order" 2>/dev/null)"
  [ -z "$why" ] && return 0
  diag "$1:$why"
  diag_file "$state/err" 10
  return 1
}

# verdict NAME MODE WANT [SIGNAL]: two test points.
verdict () {
  run_child "$1" "$2" "${4:-}"
  check "$1: the exit status is $3 (got $status)" [ "$status" = "$3" ]
  check "$1: everything registered is stopped or removed, in reverse order" gone "$1"
}

verdict pass pass 0
verdict exit1 exit1 1
verdict check check 1
verdict bail bail 1
verdict set-e set-e 1
verdict term signal 143 TERM
verdict int signal 130 INT
verdict hup signal 129 HUP
verdict term-twice twice 143 TERM

check "a step that failed is named in a comment" \
  grep -q '^# clean-up: false: exit status 1 (ignored)$' "$T/pass/err"
check "a failing child's TAP says so" grep -q '^not ok 1 - a check that fails$' "$T/check/out"

# KEEP_TEST_DIRS=1 keeps $T and still stops everything else.
KEEP_TEST_DIRS=1 run_child keep pass
kept=$(cat "$T/keep/T")
check "KEEP_TEST_DIRS=1: \$T is kept (and said so)" \
  eval '[ -d "$kept" ] && grep -q "^# kept $kept\$" "$T/keep/err"'
rm -rf "$kept"
check "KEEP_TEST_DIRS=1: the rest is cleaned up, status 0" \
  eval '[ "$status" = 0 ] && gone keep'
done_testing
