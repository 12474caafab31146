#!/bin/bash
# test-scripts-bench: scripts/bench runs every section it lists by default
# (at the smallest settings, so it says nothing of speed) and prints each
# section's report and verdict lines (the e2e section's exit phases among
# them, read from the plugin's nbdkit -v output); an unknown section is
# refused.
. "$(dirname "$0")/lib.sh"
require_tools nbdkit fio jq numfmt qemu-storage-daemon
require_built "$PLUGIN" "$WTRACK" "$TOP/tests/tools/mkbigrun" "$TOP/tests/tools/mkworstrun"
plan 16

sections=$("$TOP/scripts/bench" --help | sed -n 's/.*--sections LIST.*(default: all: \(.*\))$/\1/p')
check "--help names the default sections ($sections)" [ -n "$sections" ]

mkdir "$T/bench"
"$TOP/scripts/bench" --sections "${sections// /,}" --workloads rand4k \
  --runtime 1 --rounds 1 --size 64M --e2e-writes 2000 --e2e-rand-size 32M --e2e-seq-size 64M \
  --sustained-runtime 1 --dir "$T/bench" >"$T/report" 2>"$T/progress"
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
    grep -Eq '^(PASS|MISS) plugin hashes-only 4k .*\[control nbdkit file [0-9.]+x, [0-9.]+-[0-9.]+(; [^]]*)?\]$' "$T/report"
}
check "the plugin section runs nbdkit file against itself as a control, shown beside the verdict" \
  reports_control
check "the check section reports both checker targets" \
  test "$(grep -Ec '^(PASS|MISS) check ' "$T/report")" = 2
check "the check-worst section reports the worst-case channel target" \
  grep -Eq '^(PASS|MISS) check-worst: a worst-case 64 MiB channel' "$T/report"

check "the 4 KiB verdicts of runs under 4 s are MISS, saying so" \
  test "$(grep -c '^MISS plugin .* 4k random write IOPS .*runs of 1 s: judged only with --runtime >= 4\]$' "$T/report")" = 2

# e2e: a row of seconds and ratios for every configuration, for both works.
e2e_rows () {
  local label
  for label in "nbdkit file + fsync" "nbdkit file + fsync (control)" "wtrack (default: hashes)" \
               "wtrack data=on" "wtrack stage=off" "qemu blklogwrites + fsync"; do
    [ "$(grep -Ec "^${label//[()+]/.} +[0-9.]+ s [0-9.]+x \([0-9.]+-[0-9.]+\) +[0-9.]+ s [0-9.]+x \([0-9.]+-[0-9.]+\)$" "$T/report")" -ge 1 ] ||
      { echo "# no e2e row: $label" >&2; return 1; }
  done
}
check "e2e: every configuration's start-to-exit seconds and ratio, rand and seq" e2e_rows
check "e2e: the exit's seconds for every configuration" \
  test "$(sed -n "/^e2e exit: fio's end to exit/,/^e2e exit phases/p" "$T/report" | grep -Ec '^.* [0-9.]+ s +[0-9.]+ s$')" = 6
# The plugin's exit phases (nbdkit -v), each with its seconds, in the order
# the unload runs them: the queue's drain and the image's sync, the
# exports and the log closed; the header's DATA and STORE cleared only with
# data=off; last, the exit's seconds outside the unload.
phase_re='drain [0-9.]+ s, image sync [0-9.]+ s, exports close [0-9.]+ s, log close [0-9.]+ s'
check "e2e: the default mode's exit phases, both works" \
  test "$(grep -Ec "^e2e exit phases \(nbdkit -v, median\), wtrack \(default: hashes\), (rand|seq): $phase_re, header [0-9.]+ s, unload [0-9.]+ s, outside unload -?[0-9.]+ s$" "$T/report")" = 2
check "e2e: data=on's exit phases (no header rewrite), both works" \
  test "$(grep -Ec "^e2e exit phases \(nbdkit -v, median\), wtrack data=on, (rand|seq): $phase_re, unload [0-9.]+ s, outside unload -?[0-9.]+ s$" "$T/report")" = 2
check "e2e: its five verdicts (default and data=on on both works, the default's exit)" \
  eval 'test "$(grep -Ec "^(PASS|MISS) e2e (default \(hashes\)|data=on) (rand|seq) work, start to exit, vs nbdkit file \+ fsync: [0-9.]+x \(target >= 0\.[79]0x\) \[control nbdkit file [0-9.]+x" "$T/report")" = 4 &&
        grep -Eq "^(PASS|MISS) e2e default \(hashes\) exit after the rand work vs nbdkit file.s exit \+ fsync: [0-9.]+x \(target <= 1\.2x\) \[[0-9.]+ s against [0-9.]+ s; control" "$T/report"'
check "e2e: no configuration of the plugin lacks its exit phases" \
  eval '! grep -q "^MISS e2e exit phases" "$T/report"'
check "sustained: rows for nbdkit file, the default mode and the control, and its verdict" \
  eval 'test "$(grep -Ec "^(nbdkit file \+ fsync|nbdkit file \+ fsync \(control\)|wtrack \(default: hashes\)) +[0-9.]+ [0-9.]+x \([0-9.]+-[0-9.]+\) +[0-9.]+ [0-9.]+x" "$T/report")" = 3 &&
        grep -Eq "^(PASS|MISS) sustained default \(hashes\) 1s 1M write throughput vs nbdkit file: [0-9.]+x \(target >= 0\.90x\) \[control" "$T/report"'
check "the report names the command that reproduces it" \
  grep -q "^command: scripts/bench --sections ${sections// /,} --workloads rand4k --runtime 1 " "$T/report"

"$TOP/scripts/bench" --sections nosuch --dir "$T/bench" >/dev/null 2>"$T/err"
status=$?
check "an unknown section is refused (exit 2): $(tail -n 1 "$T/err")" \
  eval '[ "$status" = 2 ] && grep -q "unknown section: nosuch" "$T/err"'
done_testing
