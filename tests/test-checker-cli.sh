#!/bin/bash
# wtrack's one way to fail: every command's --help names "wtrack CMD" on its
# first line; messages carry the "wtrack CMD: " prefix once; bad usage exits
# 2 everywhere (the scripts 4); a failed write to stdout is an error (exit 2, a message), as
# git and util-linux have it; guest text in dump reaches no terminal raw.
. "$(dirname "$0")/lib.sh"
require_tools truncate
GEN=$TOP/tests/unit/gen-wtlog
CLASSES=$TOP/tests/unit/test-check-classes
require_built "$WTRACK" "$GEN" "$CLASSES"
COMMANDS="check dump verify replay export import crash"
plan 53

for c in $COMMANDS; do
  check "$c --help: the first line is the usage of wtrack $c" \
    grep -q "^Usage: wtrack $c \[OPTION\.\.\.\]" <("$WTRACK" "$c" --help | head -n 1)
done
check "wtrack --help: bad usage exits 2 in every command" \
  grep -q '2 an error or bad$' <("$WTRACK" --help)

# Bad usage: exit 2, one line that names the command once and its --help.
bad_usage () {
  local c=$1; shift
  # shellcheck disable=SC2086 # "campaign expand": a command and its subcommand
  "$WTRACK" $c "$@" >/dev/null 2>"$T/usage.err"
  local rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/usage.err")" = 1 ] \
    && grep -q "^wtrack $c: .* (see wtrack $c --help)$" "$T/usage.err" \
    && [ "$(grep -o wtrack "$T/usage.err" | wc -l)" = 2 ] \
    || { diag "wtrack $c $*: exit $rc: $(cat "$T/usage.err")"; return 1; }
}
for c in $COMMANDS; do
  check "$c --no-such-option: exit 2, prefixed once" bad_usage "$c" --no-such-option
done
# campaign has subcommands, each named in its messages and its --help
for c in "campaign expand" "campaign collect" "campaign todo" "campaign cell-facts"; do
  # shellcheck disable=SC2086 # "campaign expand": a command and its subcommand
  check "$c --help: the first line is the usage of wtrack $c" \
    grep -q "^Usage: wtrack $c \[OPTION\.\.\.\]" <("$WTRACK" $c --help | head -n 1)
  check "$c --no-such-option: exit 2, prefixed once" bad_usage "$c" --no-such-option
done
check "campaign --help: the first line is the usage of wtrack campaign" \
  grep -q "^Usage: wtrack campaign " <("$WTRACK" campaign --help | head -n 1)
check "campaign without a subcommand: exit 2, prefixed once" bad_usage campaign
check "replay without LOG: exit 2" bad_usage replay
check "verify with one argument: exit 2" bad_usage verify x
check "check --max-runs -1: exit 2" bad_usage check --max-runs -1 run
"$WTRACK" nosuch >/dev/null 2>"$T/nosuch.err"; rc=$?
check "an unknown command: exit 2, wtrack: prefix" \
  test "$rc" = 2 -a "$(cat "$T/nosuch.err")" = "wtrack: unknown command: nosuch (see wtrack --help)"

# An input error: the prefix once, then what failed.
"$WTRACK" check /nonexistent >/dev/null 2>"$T/check.err"; rc=$?
check "check /nonexistent: exit 2, stderr starts with 'wtrack check: '" \
  test "$rc" = 2 -a "$(head -c 14 "$T/check.err")" = "wtrack check: "
check "check /nonexistent: one message, the prefix once" \
  test "$(wc -l <"$T/check.err")" = 1 -a "$(grep -o 'wtrack check' "$T/check.err" | wc -l)" = 1
"$WTRACK" dump "$T/none.wtlog" >/dev/null 2>"$T/dump.err"; rc=$?
check "dump of a missing log: 'wtrack dump: open: PATH: reason'" \
  test "$rc" = 2 -a -n "$(grep -x "wtrack dump: open: $T/none.wtlog: No such file or directory" "$T/dump.err")"

# stdout on a full device.
"$GEN" "$T/g.wtlog" --disk-size 1M --bytes 256K --write-size 4K --seed 1 \
  --final "$T/final.img" >/dev/null || bail_out
mkdir "$T/run" && truncate -s 1M "$T/run/base.img" && cp "$T/g.wtlog" "$T/run/writes.wtlog"
"$CLASSES" --make "$T/clean" clean || bail_out
"$CLASSES" --make "$T/hostile" hostile || bail_out
full () {
  local what=$1; shift
  local c=$2
  "$@" >/dev/full 2>"$T/full.err"
  local rc=$?
  [ "$rc" = 2 ] && grep -qx "wtrack $c: write: stdout: No space left on device" "$T/full.err" \
    || { diag "$what: exit $rc: $(cat "$T/full.err")"; return 1; }
}
# The same commands write to a file without error: only stdout differs.
check "dump LOG to a file: exit 0" eval '"$WTRACK" dump "$T/g.wtlog" >/dev/null'
check "dump LOG >/dev/full: exit 2, a message" full dump "$WTRACK" dump "$T/g.wtlog"
check "dump --json LOG >/dev/full: exit 2" full dump-json "$WTRACK" dump --json "$T/g.wtlog"
check "dump --trace - LOG >/dev/full: exit 2, one message" full trace "$WTRACK" dump --trace - "$T/g.wtlog"
check "dump --channel >/dev/full: exit 2" full channel "$WTRACK" dump --channel "$T/clean/channel.bin"
check "dump --help >/dev/full: exit 2" full help "$WTRACK" dump --help
check "verify >/dev/full: exit 2 (0 to a file)" \
  eval '"$WTRACK" verify "$T/g.wtlog" "$T/final.img" >/dev/null && full verify "$WTRACK" verify "$T/g.wtlog" "$T/final.img"'
check "check RUN_DIR >/dev/full: exit 2 (0 to a file)" \
  eval '"$WTRACK" check "$T/clean" >/dev/null && full check "$WTRACK" check "$T/clean"'
check "check --no-manifest >/dev/full: exit 2" \
  full check "$WTRACK" check --no-manifest --image "$T/final.img" --log "$T/g.wtlog"
check "replay --list-points >/dev/full: exit 2" full replay "$WTRACK" replay --list-points "$T/g.wtlog"
check "crash >/dev/full: exit 2 (0 to a file)" \
  eval '"$WTRACK" crash "$T/run" --check true >/dev/null && full crash "$WTRACK" crash "$T/run" --check true'
check "a closed stdout: no error when nothing is written to it (export)" \
  eval '"$WTRACK" export --format dm-log-writes "$T/g.wtlog" "$T/g.dm" >&-'
check "a closed stdout: an error when something is (dump), exit 2" \
  eval '"$WTRACK" dump "$T/g.wtlog" >&- 2>"$T/closed.err"; [ $? = 2 ] && grep -qx "wtrack dump: write: stdout: Bad file descriptor" "$T/closed.err"'


# Guest text: escapes shown as text (\x1b), printable UTF-8 left alone.
"$WTRACK" dump --channel "$T/hostile/channel.bin" >"$T/hostile.txt"; rc=$?
check "dump of a hostile channel: exit 0" [ "$rc" = 0 ]
check "dump: the guest's ESC bytes are written \\x1b" grep -qF '    kernel=6.1.0-\x1b[31mred\x1b[0m' "$T/hostile.txt"
check "dump: no control byte but newlines reaches stdout" \
  test -z "$(tr -d '\n' <"$T/hostile.txt" | LC_ALL=C tr -d '\040-\176\200-\377' | head -c 1)"
check "dump: a forged line stays inside its own (\\r shown)" grep -qF 'error=x\r!! forged error\x1b]0;title\x07' "$T/hostile.txt"

# The scripts agree: 4 on bad usage.
scripts_usage () {
  local s rc bad=""
  for s in get-kernel build-kernel mkinitramfs install-deps bench bench-check bench-replay; do
    "$TOP/scripts/$s" --no-such-option >/dev/null 2>&1; rc=$?
    [ "$rc" = 4 ] || bad="$bad $s:$rc"
  done
  "$TOP/scripts/wtrack-run" stray-argument >/dev/null 2>&1; rc=$?
  [ "$rc" = 4 ] || bad="$bad wtrack-run:$rc"
  for s in "" expand run collect; do
    "$TOP/scripts/wtrack-campaign" $s --no-such-option >/dev/null 2>&1; rc=$?
    [ "$rc" = 4 ] || bad="$bad wtrack-campaign${s:+-$s}:$rc"
  done
  [ -z "$bad" ] || { diag "not 4:$bad"; return 1; }
}
check "every script exits 4 on bad usage" scripts_usage

# campaign cell-facts: what a cell.ini keeps of a report.json, so that no
# script parses the JSON wtrack writes (scripts/wtrack-campaign, bench)
cat >"$T/facts.json" <<'EOF'
{"verdict": "damaged", "bad_sectors": 12, "guest": {"page_size": 65536, "block_size": null},
 "by_class": {"unmapped": 0, "lied": 0, "overwritten": 4, "misplaced": 0, "lost": 8},
 "timings": {"setup": 0.815, "boot": 30.5, "total": 31.315}}
EOF
printf '%s\n' verdict=damaged bad_sectors=12 page_size=65536 '[classes]' overwritten=4 lost=8 \
  '[timings]' setup=0.815 boot=30.5 total=31.315 >"$T/facts.want"
check "campaign cell-facts: the verdict, counts, sizes known, classes that occurred, timings" \
  diff -u "$T/facts.want" <("$WTRACK" campaign cell-facts "$T/facts.json")
echo '[1, 2]' >"$T/facts-array.json"
# "positive" is the number's value, not its text: 0.5 is kept, -1 and 0.0 not
sed 's/"unmapped": 0, "lied": 0,/"unmapped": 0.0, "lied": 0.5, "torn": -1,/' "$T/facts.json" >"$T/facts-frac.json"
sed 's/^overwritten=4$/lied=0.5\noverwritten=4/' "$T/facts.want" >"$T/facts-frac.want"
check "campaign cell-facts: a class of 0.5 is printed, -1 and 0.0 are not" \
  diff -u "$T/facts-frac.want" <("$WTRACK" campaign cell-facts "$T/facts-frac.json")
check "campaign cell-facts: a report that is not an object: exit 2, named" \
  eval '"$WTRACK" campaign cell-facts "$T/facts-array.json" >/dev/null 2>"$T/facts.err"; [ $? = 2 ] && grep -q "facts-array.json: not a JSON object" "$T/facts.err"'

done_testing
