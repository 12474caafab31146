#!/bin/bash
# Every shell script of the tree passes shellcheck, with the settings of
# .shellcheckrc (each exclusion there, or inline, says why).
. "$(dirname "$0")/lib.sh"
require_tools shellcheck
plan 1

cd "$TOP" || bail_out
out=$(shellcheck -f gcc scripts/* guest/init tests/*.sh 2>&1)
check "shellcheck scripts/* guest/init tests/*.sh: no finding" test -z "$out"
[ -z "$out" ] || diag "$out"
done_testing
