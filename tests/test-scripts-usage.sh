#!/bin/bash
# Bad usage is exit 4 in every script (scripts/lib.sh): an unknown
# option and an option given without its value, each with one line naming
# it, before anything is fetched, built or booted.
. "$(dirname "$0")/lib.sh"

# script and one option of it that takes a value
cases=(
  "build-kernel --patch" "get-kernel --release" "mkinitramfs --fs"
  "bench --rounds" "bench-check --rounds" "bench-replay --size"
  "wtrack-run --fs" "wtrack-campaign --jobs" "wtrack-minimize --jobs"
)
plan $((${#cases[@]} * 2 + 1))

# usage_status SCRIPT ARGS...: prints the status and the first stderr line
usage_status () {
  local script=$1; shift
  "$TOP/scripts/$script" "$@" >/dev/null 2>"$T/err" </dev/null
  echo "$? $(head -1 "$T/err")"
}

for c in "${cases[@]}"; do
  read -r script opt <<<"$c"
  [ "$script" = wtrack-campaign ] && sub=run || sub=""
  # shellcheck disable=SC2086 # sub: no word, or the subcommand
  got=$(usage_status "$script" $sub --no-such-option)
  check "$script: an unknown option is exit 4 and named ($got)" \
    test "${got%% *}" = 4 -a -n "$(grep -F -- '--no-such-option' <<<"$got")"
  # shellcheck disable=SC2086
  got=$(usage_status "$script" $sub "$opt")
  check "$script: $opt without its value is exit 4 and named ($got)" \
    test "${got%% *}" = 4 -a -n "$(grep -F -- "$opt" <<<"$got")"
done
# install-deps takes no option with a value: only the unknown one
got=$(usage_status install-deps --no-such-option)
check "install-deps: an unknown option is exit 4 and named ($got)" \
  test "${got%% *}" = 4 -a -n "$(grep -F -- '--no-such-option' <<<"$got")"
done_testing
