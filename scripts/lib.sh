# shellcheck shell=bash disable=SC2154,SC2034 # prog, die_status: set by the sourcing script; t0: read by it
# lib.sh: the messages and exit statuses every wtrack script shares
# (sourced; bash). The sourcing script sets prog (its name in messages) and
# die_status (the status of its own failure: 1 for the set-up scripts, 2 for
# the bench and campaign scripts, 3 for wtrack-run) first. Bad usage is 4
# in every script (doc/design.md, "Exit statuses and messages").

# now_us: microseconds since the epoch, into $now_us, without a fork (a
# command substitution would cost one per progress line)
now_us () { now_us=${EPOCHREALTIME/[.,]/}; }
# t0: when the script started (a script that set it earlier keeps its own)
[ -n "${t0:-}" ] || { now_us; t0=$now_us; }

# step MESSAGE: a progress line with the seconds since the script started
step () {
  local us
  now_us; us=$((now_us - t0))
  printf '%s: [%3d.%02ds] %s\n' "$prog" $((us / 1000000)) $((us % 1000000 / 10000)) "$*" >&2
}

# say MESSAGE: one line to stderr, prefixed with the script's name
say () { echo "$prog: $*" >&2; }

# die MESSAGE: the script's own failure, exit die_status
die () { say "$*"; exit "${die_status:?lib.sh: die_status not set}"; }

# usage_error MESSAGE: bad usage, exit 4, pointing at --help
usage_error () { say "$*"; echo "try '$prog --help'" >&2; exit 4; }

# need_arg "$@": an option that takes a value was given without one
need_arg () { [ $# -ge 2 ] || usage_error "option $1 needs a value"; }
