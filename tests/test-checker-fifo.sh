#!/bin/bash
# A run directory from elsewhere may hold a FIFO where a file was due; open(2)
# on it would wait for a writer forever. Every tool must refuse it at once
# (exit 2) and name the file. timeout makes a regression fail, not hang.
. "$(dirname "$0")/lib.sh"
require_tools timeout mkfifo
GEN=$TOP/tests/unit/test-check-classes
GENLOG=$TOP/tests/unit/gen-wtlog
require_built "$WTRACK" "$GEN" "$GENLOG"
plan 14

"$GEN" --make "$T/clean" clean >/dev/null
# replay needs a log with data
"$GENLOG" "$T/data.wtlog" --disk-size 1M --bytes 64K --write-size 4K >/dev/null

# fifo_dir NAME FILE...: a copy of the clean run with each FILE a FIFO.
fifo_dir () {
  local dir=$T/$1 f; shift
  cp -r "$T/clean" "$dir"
  for f; do rm "$dir/$f" && mkfifo "$dir/$f"; done
}

# refused DESC WANT COMMAND...: the command exits 2 within 10 s and says
# (on stderr, or in check's report) that WANT (a path) is a FIFO.
refused () {
  local desc=$1 want=$2; shift 2
  timeout 10 "$@" >"$T/err.txt" 2>&1
  local status=$?
  if [ $status -eq 2 ] && grep -qF -- "$want: a FIFO" "$T/err.txt"; then
    ok "$desc"
    return
  fi
  not_ok "$desc (exit $status$([ $status = 124 ] && echo ': hung'))"
  diag_file "$T/err.txt" 5
}

fifo_dir all disk.img writes.wtlog channel.bin
timeout 10 "$WTRACK" check "$T/all" >"$T/err.txt" 2>&1
status=$?
check "check: a run whose three files are FIFOs exits 2 at once (exit $status)" \
  test $status -eq 2
check "check: ... and names one of them as a FIFO" \
  grep -qE "$T/all/(disk\.img|writes\.wtlog|channel\.bin): a FIFO" "$T/err.txt"

for f in disk.img writes.wtlog channel.bin; do
  fifo_dir "only-$f" "$f"
  refused "check: a FIFO $f alone is refused and named" "$T/only-$f/$f" \
    "$WTRACK" check "$T/only-$f"
done
refused "check --no-manifest: a FIFO disk.img" "$T/only-disk.img/disk.img" \
  "$WTRACK" check --no-manifest "$T/only-disk.img"

refused "dump: a FIFO log" "$T/all/writes.wtlog" "$WTRACK" dump "$T/all/writes.wtlog"
refused "dump --json: a FIFO log" "$T/all/writes.wtlog" \
  "$WTRACK" dump --json "$T/all/writes.wtlog"
refused "dump --channel: a FIFO channel" "$T/all/channel.bin" \
  "$WTRACK" dump --channel "$T/all/channel.bin"
refused "verify: a FIFO log" "$T/all/writes.wtlog" \
  "$WTRACK" verify "$T/all/writes.wtlog" "$T/clean/disk.img"
refused "verify: a FIFO image" "$T/all/disk.img" \
  "$WTRACK" verify "$T/clean/writes.wtlog" "$T/all/disk.img"
refused "replay: a FIFO base" "$T/all/disk.img" \
  "$WTRACK" replay "$T/data.wtlog" --base "$T/all/disk.img" --out "$T/out.img"
refused "import: a FIFO dm-log-writes log" "$T/all/disk.img" \
  "$WTRACK" import dm-log-writes "$T/all/disk.img" "$T/imported.wtlog"

# The same tools still read the regular files of the clean run.
check "check: the clean run still reads (exit 0)" \
  timeout 60 "$WTRACK" check -q "$T/clean"
done_testing
