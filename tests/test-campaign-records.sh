#!/bin/bash
# test-campaign-records: what a campaign folder's records say, no boot. The
# cells are made by scripts/wtrack-campaign itself with a kernel that cannot
# be had (each cell ends at once, an error written as a real cell writes its
# cell.ini), or are cell.ini files written here as a crash or a corrupt disk
# would leave them. Covers: a cell is its arguments and its kernel file
# (cell.ini records both; 'wtrack campaign todo' and collect compare them
# with plan.tsv), an interrupted campaign is not a skipped one (collect exit
# 2, <error> not <skipped>), a corrupt cell.ini is an error whose bytes are
# escaped and which --resume runs again, the seed cap is named, the
# progress line counts errors as the summary does, a bad option (of
# wtrack-run or the workload) is refused before any cell starts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
require_tools jq python3
require_built "$WTRACK"
plan 31

C=$TOP/scripts/wtrack-campaign
AGREE=$TOP/tests/tools/campaign-agree.py
ESC=$(printf '\033')
# xcount PATH FILE: how many elements of results.xml match an ElementTree path
xcount () {
  python3 -c 'import sys, xml.etree.ElementTree as E; print(len(E.parse(sys.argv[2]).getroot().findall(sys.argv[1])))' "$1" "$2"
}
# xerrors FILE: the testsuites' errors= attributes, summed
xerrors () {
  python3 -c 'import sys, xml.etree.ElementTree as E; print(sum(int(s.get("errors")) for s in E.parse(sys.argv[1]).getroot().iter("testsuite")))' "$1"
}

# ---- a campaign whose kernel cannot be had: every cell an error, no boot --
out=$T/nok
rc=0
"$C" run --kernels "$T/no/such/bzImage" --seeds 1-3 --set size=16M --out "$out" --jobs 2 \
  >"$T/nok.out" 2>"$T/nok.err" || rc=$?
sed 's/^/#   /' "$T/nok.err" >&2
check "cells whose kernel cannot be had: exit 2, 3 errors" \
  [ "$rc" = 2 -a "$(jq '.counts.error' "$out/summary.json")" = 3 ]
last=$(grep -o 'errors [0-9]*' "$T/nok.err" | tail -n 1)
check "the last progress line counts the summary's errors ($last)" [ "$last" = "errors 3" ]
id1=$(cut -f1 "$out/plan.tsv" | head -n 1)
check "cell.ini records the cell's arguments, tab-separated" \
  [ "$(sed -n 's/^args=//p' "$out/cells/$id1/cell.ini")" \
    = "$(cut -f7- "$out/plan.tsv" | head -n 1 | sed 's/\t/\\t/g')" ]
check "cell.ini records the kernel's identity (none: it could not be had)" \
  grep -qx 'kernel_sha256=-' "$out/cells/$id1/cell.ini"
"$WTRACK" campaign todo "$out" >"$T/todo.0"
check "todo: nothing, every cell has its result" [ ! -s "$T/todo.0" ]

# the same campaign asked with another option: every cell is to run again
"$WTRACK" campaign expand --kernels "$T/no/such/bzImage" --seeds 1-3 --set size=16M \
  --set plugin-opt=fault=vanish:p=0.05:seed=3 --plan "$out/plan.tsv"
"$WTRACK" campaign todo "$out" >"$T/todo.1"
check "todo after an option changed: the 3 cells, 'other arguments'" \
  [ "$(grep -c 'ran with other arguments' "$T/todo.1")" = 3 ]
rc=0; "$WTRACK" campaign collect -q "$out" || rc=$?
check "collect after an option changed: no cell reported with its old result (exit 2, 3 stale errors)" \
  [ "$rc" = 2 -a "$(jq '[.cells[] | select(.error | test("other arguments"))] | length' "$out/summary.json")" = 3 ]

# ---- fake finished cells, as cell_main writes them -----------------------
# fake_cell DIR ID STATUS [LINE...]: a finished cell with the plan's arguments
fake_cell () {
  local dir=$1 id=$2 status=$3 args; shift 3
  args=$(awk -F'\t' -v id="$id" '$1 == id { for (i = 7; i <= NF; i++) printf "%s%s", (i > 7 ? "\\t" : ""), $i }' "$dir/plan.tsv")
  mkdir -p "$dir/cells/$id"
  { printf '[cell]\nid=%s\nstatus=%s\nexit=0\nseconds=10\nkernel=%s\nkernel_sha256=%s\nargs=%s\nbad_sectors=0\n' \
      "$id" "$status" "$kspec" "$ksum" "$args"
    [ $# = 0 ] || printf '%s\n' "$@"; } >"$dir/cells/$id/cell.ini"
}
kspec=$T/bzImage
echo "not a kernel, but a file with a hash" >"$kspec"
ksum=$(sha256sum <"$kspec" | cut -d' ' -f1)
new_campaign () {
  rm -rf "$1"; mkdir -p "$1"
  "$WTRACK" campaign expand --kernels "$kspec" --seeds 1-4 --set size=16M --plan "$1/plan.tsv"
  printf '%s\t%s\t-\t%s\t\n' "$kspec" "$kspec" "$ksum" >"$1/kernels.tsv"
  mapfile -t ids < <(cut -f1 "$1/plan.tsv")
}

# an interrupted campaign: 2 cells done, 2 never started
f=$T/int
new_campaign "$f"
fake_cell "$f" "${ids[0]}" clean
fake_cell "$f" "${ids[1]}" clean
rc=0; "$C" collect "$f" >"$T/int.out" || rc=$?
check "an interrupted campaign's collect: exit 2" [ "$rc" = 2 ]
check "results.xml: 2 errors and no skips for the cells that never ran" \
  [ "$(xcount './/testcase/error' "$f/results.xml")" = 2 \
    -a "$(xcount './/skipped' "$f/results.xml")" = 0 \
    -a "$(xerrors "$f/results.xml")" = 2 ]
check "summary.json: they are errors saying 'interrupted or lost', none not_run" \
  [ "$(jq '[.cells[] | select(.status == "error") | select(.error | test("interrupted or .*lost"))] | length' "$f/summary.json")" = 2 \
    -a "$(jq '.counts.not_run' "$f/summary.json")" = 0 ]
check "summary.txt names them as interrupted or lost" \
  [ "$(grep -c 'interrupted or the cell lost' "$f/summary.txt")" = 2 ]
check "summary.txt, summary.json and results.xml agree (interrupted)" python3 "$AGREE" "$f"

# the same cells left by --until-fail: skipped, not errors
touch "$f/until-fail" "$f/stop"
fake_cell "$f" "${ids[1]}" damaged bad_sectors=8
rc=0; "$C" collect "$f" >/dev/null || rc=$?
check "--until-fail's cells not run: exit 1 (the damage), 2 <skipped>, no error" \
  [ "$rc" = 1 -a "$(xcount './/skipped' "$f/results.xml")" = 2 \
    -a "$(xcount './/testcase/error' "$f/results.xml")" = 0 \
    -a "$(jq '.counts.not_run' "$f/summary.json")" = 2 ]
check "summary.txt says they were not run because of --until-fail" \
  grep -q '2 not run (--until-fail)' "$f/summary.txt"
check "summary.txt, summary.json and results.xml agree (--until-fail)" python3 "$AGREE" "$f"

# a corrupt cell.ini (control characters, no key file), a non-numeric
# bad_sectors, a cell.ini of another kernel file, a lost cell
g=$T/bad
new_campaign "$g"
mkdir -p "$g/cells/${ids[0]}"
printf '\033[31mgarbage\033]0;title\007\n\001\002' >"$g/cells/${ids[0]}/cell.ini"
fake_cell "$g" "${ids[1]}" damaged 'bad_sectors=12abc'
fake_cell "$g" "${ids[2]}" error "error=$(printf 'wtrack-run exit 3: \033[2Jboom')"
fake_cell "$g" "${ids[3]}" clean
sed -i 's/^kernel_sha256=.*/kernel_sha256=0000/' "$g/cells/${ids[3]}/cell.ini"
rc=0; "$C" collect "$g" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
check "corrupt records: collect exit 2" [ "$rc" = 2 ]
check "no byte of a cell.ini reaches the terminal or summary.txt unescaped" \
  eval "! grep -q '$ESC' '$T/bad.out' '$T/bad.err' '$g/summary.txt' && grep -qF '\\x1b' '$g/summary.txt'"
check "a garbage cell.ini is an error" \
  [ "$(jq -r --arg id "${ids[0]}" '.cells[] | select(.id == $id) | .status' "$g/summary.json")" = error ]
check "a non-numeric bad_sectors is an error naming it, not 0 bad sectors" \
  [ "$(jq -r --arg id "${ids[1]}" '.cells[] | select(.id == $id) | "\(.status) \(.error)"' "$g/summary.json" | grep -c '^error .*bad_sectors: not a number: 12abc')" = 1 ]
check "a cell that ran another kernel file is not reported clean" \
  [ "$(jq -r --arg id "${ids[3]}" '.cells[] | select(.id == $id) | .status' "$g/summary.json")" = error ]
"$WTRACK" campaign todo "$g" >"$T/todo.bad"
check "todo: the garbage, the bad number and the other kernel run again; the error cell does not" \
  [ "$(cut -f1 "$T/todo.bad" | tr '\n' ' ')" = "${ids[0]} ${ids[1]} ${ids[3]} " ]
check "todo's reasons are escaped too" eval "! grep -q '$ESC' '$T/todo.bad'"
check "summary.txt, summary.json and results.xml agree (corrupt records)" python3 "$AGREE" "$g"

# ---- campaign files -------------------------------------------------------
rc=0; "$C" expand --seeds 1-1000000 >/dev/null 2>"$T/seeds.err" || rc=$?
check "seeds = 1-1000000: exit 4, the cap named" \
  [ "$rc" = 4 -a -n "$(grep -E 'more than 100000 seeds' "$T/seeds.err")" ]
rc=0; "$C" expand --seeds 5-x >/dev/null 2>"$T/seeds2.err" || rc=$?
check "seeds = 5-x: exit 4, a bad range" [ "$rc" = 4 -a -n "$(grep 'bad seed or range: 5-x' "$T/seeds2.err")" ]

# ---- options checked before any cell starts --------------------------------
# wtrack-run --dry-run: options checked, the workload's by the guest program
rc=0; "$TOP/scripts/wtrack-run" --dry-run --size 16M --passes 2 --seed 3 --out "$T/dry" || rc=$?
check "wtrack-run --dry-run of good options: exit 0, --out not made" [ "$rc" = 0 -a ! -e "$T/dry" ]
rc=0; "$TOP/scripts/wtrack-run" --dry-run --size 16M --frobnicate 7 2>"$T/dry.err" || rc=$?
check "wtrack-run --dry-run of a workload option the guest does not know: exit 4, named" \
  [ "$rc" = 4 -a -n "$(grep -F 'bad option: --frobnicate' "$T/dry.err")" ]
# campaign_refused NAME WANT [RUN-ARGS...]: a run refused with exit 4, its
# message matching WANT, and no folder made (so no cell started)
campaign_refused () {
  local name=$1 want=$2 rc=0; shift 2
  "$C" run "$@" --out "$T/$name" >/dev/null 2>"$T/$name.err" || rc=$?
  [ "$rc" = 4 ] && grep -qE -- "$want" "$T/$name.err" && [ ! -e "$T/$name" ] ||
    { diag "exit $rc: $(cat "$T/$name.err")"; return 1; }
}
printf '[campaign]\nkernels = %s\nseeds = 1-3\nsize = 16M\n[clean]\n[lossy]\nplugin-opt = fault=vanish:p=0.002:seed=3\nfrobnicate = 7\n' \
  "$kspec" >"$T/v.ini"
check "an unknown key in a variant: exit 4 before any cell, naming the key and the variant" \
  campaign_refused v1 'variant \[lossy\]\).*bad option: --frobnicate' "$T/v.ini"
check "a wtrack-run option with a bad value: exit 4, named" \
  campaign_refused v2 '--mem: not a number of MiB: lots' --kernels "$kspec" --set mem=lots
check "a workload option another workload does not take: exit 4, named" \
  campaign_refused v3 'option --passes does not apply to pwrite' --kernels "$kspec" \
    --workloads 'linus2006 pwrite' --set passes=2
ls -d "$out"/cells/* >"$T/nok.cells"
rc=0; "$C" run --kernels "$T/no/such/bzImage" --seeds 1-3 --set frobnicate=1 --out "$out" \
  >/dev/null 2>&1 || rc=$?
check "a refused campaign leaves the folder's earlier campaign alone" \
  [ "$rc" = 4 -a "$(ls -d "$out"/cells/* | wc -l)" = 3 -a -f "$out/plan.tsv" ]
done_testing
