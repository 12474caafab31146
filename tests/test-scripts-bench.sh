#!/bin/bash
# test-scripts-bench: scripts/bench runs every section it lists by default
# (at the smallest settings, so it says nothing of speed) and prints each
# section's report and verdict lines; an unknown section is refused.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit fio jq numfmt qemu-storage-daemon
require_built "$PLUGIN" "$WTRACK" "$TOP/tests/tools/mkbigrun" "$TOP/tests/tools/mkworstrun"
plan 7

sections=$("$TOP/scripts/bench" --help | sed -n 's/.*--sections LIST.*(default: all: \(.*\))$/\1/p')
check "--help names the default sections ($sections)" [ -n "$sections" ]

mkdir "$T/bench"
"$TOP/scripts/bench" --sections "${sections// /,}" --workloads rand4k \
  --runtime 1 --rounds 1 --size 64M --dir "$T/bench" >"$T/report" 2>"$T/progress"
status=$?
diag_file "$T/report"
# 1 is a missed target: these settings are not a measurement.
if [ "$status" -le 1 ]; then
  ok "every default section runs (exit $status)"
else
  not_ok "every default section runs (exit $status)"
  diag_file "$T/progress"
fi
check "the plugin section reports the hashes-only 4 KiB ratio" \
  grep -Eq '^(PASS|MISS) plugin hashes-only 4k random write IOPS' "$T/report"
# The control row, and its ratio beside the 4 KiB verdict.
reports_control () {
  grep -q '^nbdkit file (control) ' "$T/report" &&
    grep -Eq '^(PASS|MISS) plugin hashes-only 4k .*\[control nbdkit file [0-9.]+x, [0-9.]+-[0-9.]+\]$' "$T/report"
}
check "the plugin section runs nbdkit file against itself as a control, shown beside the verdict" \
  reports_control
check "the check section reports both checker targets" \
  test "$(grep -Ec '^(PASS|MISS) check ' "$T/report")" = 2
check "the check-worst section reports the worst-case channel target" \
  grep -Eq '^(PASS|MISS) check-worst: a worst-case 64 MiB channel' "$T/report"

"$TOP/scripts/bench" --sections nosuch --dir "$T/bench" >/dev/null 2>"$T/err"
status=$?
check "an unknown section is refused (exit 2): $(tail -n 1 "$T/err")" \
  eval '[ "$status" = 2 ] && grep -q "unknown section: nosuch" "$T/err"'
done_testing
