# shellcheck shell=bash
# tests/lib-run.sh: whole runs for the end-to-end tests (source after lib.sh).
#
#   wtrack_run NAME [wtrack-run options...]   run into $T/NAME; status in
#                                            $run_status, seconds in $run_secs;
#                                            without the cold pass (one boot
#                                            less) unless cold_runs=yes
#   check_run_facts NAME                     the run's RESULT, manifest and
#                                            marks hold up (5 test points)
#   check_fault_run NAME CLASS               a run with injected faults: the
#                                            report names exactly the sectors
#                                            the ground truth predicts, in
#                                            CLASS (5 test points)

require_tools qemu-system-x86_64 nbdkit mkfs.ext4 cpio busybox
require_tools /usr/bin/python3
FAULTSET=$TOP/tests/tools/faultset
require_built "$PLUGIN" "$WTRACK" "$GUEST" "$TOP/tests/tools/runfacts" "$FAULTSET"

run_status=0
run_secs=0
cold_runs=${cold_runs:-no}
wtrack_run () {
  local name=$1; shift
  local start=$SECONDS cold=(--no-cold)
  [ "$cold_runs" = no ] || cold=()
  run_status=0
  "$TOP/scripts/wtrack-run" --accel tcg "${cold[@]}" --out "$T/$name" "$@" \
    >"$T/$name.out" 2>"$T/$name.err" || run_status=$?
  run_secs=$((SECONDS - start))
  diag "$name: exit $run_status in ${run_secs}s"
  if [ "$run_status" -gt 1 ]; then
    sed 's/^/#   /' "$T/$name.err" >&2
    [ -f "$T/$name/console.log" ] && tail -n 15 "$T/$name/console.log" | sed 's/^/#   console: /' >&2
  fi
  return 0
}

# checkpoint_run NAME: a clean run with checkpoints to replay and crash on:
# ext4, the pwrite workload on 2 files of 2 MiB, 200 ops, every file
# fsynced each 50 ops and a checkpoint reported after each fsync.  One test
# point (the run exits 0); bails out otherwise.  Sets run to its directory.
checkpoint_run () {
  wtrack_run "$1" --data-log --workload pwrite --files 2 --size 2M --ops 200 \
    --fsync-every 50 --checkpoint
  check "the run exits 0 (clean report)" [ "$run_status" = 0 ]
  [ "$run_status" = 0 ] || bail_out
  # shellcheck disable=SC2034 # the run directory, for the test that called
  run=$T/$1
}

check_run_facts () {
  local name=$1
  local facts=$T/$name.facts
  "$TOP/tests/tools/runfacts" "$T/$name" >"$facts" 2>&1 || true
  sed 's/^/#   /' "$facts" >&2
  check "$name: the guest's RESULT says status 0 and the read-back matched" \
    grep -q '^result status=0 readback=match$' "$facts"
  check "$name: the manifest lists files" grep -q '^file ' "$facts"
  check_fails "$name: the extents cover every byte of every file" \
    grep -q '^file .* covered=no' "$facts"
  check_fails "$name: every extent lies inside the disk" \
    grep -q '^file .* inside=no' "$facts"
  check "$name: MARKs bracket the file writes (none before start, none after the manifest)" \
    grep -Eq '^marks start_seq=[1-9][0-9]* manifest_seq=[1-9][0-9]* file_writes_before_start=0 file_writes_after_manifest=0$' "$facts"
}

check_run_dir () {
  local name=$1 f missing=""
  for f in disk.img base.img writes.wtlog channel.bin console.log report.txt report.json; do
    [ -e "$T/$name/$f" ] || missing="$missing $f"
  done
  if [ -z "$missing" ]; then ok "$name: the run directory is complete"
  else not_ok "$name: the run directory lacks$missing"; fi
}

# Compares run NAME's report.json with faultset's prediction; writes
# key=value facts to $T/NAME.cmp: predicted, reported, precision, recall,
# classes (the distinct classes reported), and for the page view
# pages_match (every bad page's bad_mask and text name exactly the
# predicted sectors of that page) and partial_pages (pages with some but
# not all of their sectors bad).
compare_faults () {
  local name=$1
  "$FAULTSET" "$T/$name" "$T/$name/faults.txt" >"$T/$name.predicted" 2>"$T/$name.faultset.err" \
    || sed 's/^/#   faultset: /' "$T/$name.faultset.err" >&2
  /usr/bin/python3 - "$T/$name/report.json" "$T/$name.predicted" >"$T/$name.cmp" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
predicted = set(tuple(l.split()) for l in open(sys.argv[2]) if l.strip())
reported, classes, pages_ok, partial = set(), set(), True, 0
by_page = {}
for p, fs, ds in predicted:
    by_page.setdefault((p, int(fs) // 8), set()).add(int(fs) % 8)
for f in report["files"]:
    for r in f["runs"]:
        classes.add(r["class"])
        for i in range(r["sectors"]):
            ds = "-" if r["disk_sector"] is None else str(r["disk_sector"] + i)
            reported.add((f["path"], str(r["file_offset"] // 512 + i), ds))
    for pg in f["pages"]:
        want = by_page.get((f["path"], pg["page"]), set())
        got = {i for i in range(8) if pg["bad_mask"] >> i & 1}
        named = set()
        for m in re.finditer(r"sectors? ([0-9,-]+) of \d+ ", pg["text"]):
            for part in m.group(1).split(","):
                a, _, b = part.partition("-")
                named.update(range(int(a), int(b or a) + 1))
        if got != want or named != want:
            pages_ok = False
            print("# page %d of %s: predicted %s, bad_mask %s, text %r"
                  % (pg["page"], f["path"], sorted(want), sorted(got), pg["text"]), file=sys.stderr)
        if 0 < len(got) < 8:
            partial += 1
both = len(reported & predicted)
for s in sorted(predicted - reported)[:10]:
    print("# predicted, not reported: %s" % " ".join(s), file=sys.stderr)
for s in sorted(reported - predicted)[:10]:
    print("# reported, not predicted: %s" % " ".join(s), file=sys.stderr)
print("predicted=%d" % len(predicted))
print("reported=%d" % len(reported))
print("precision=%g" % (both / len(reported) if reported else 0))
print("recall=%g" % (both / len(predicted) if predicted else 0))
print("classes=%s" % ",".join(sorted(classes)))
print("pages_match=%s" % ("yes" if pages_ok else "no"))
print("partial_pages=%d" % partial)
PY
  diag "$name: $(grep -E '^(predicted|reported|precision|recall|partial_pages)=' "$T/$name.cmp" | tr '\n' ' ')"
}
fact () { sed -n "s/^$2=//p" "$T/$1.cmp"; }

# The five checks every fault run gets.
check_fault_run () {
  local name=$1 class=$2
  check "$name: wtrack-run exits 1 (damage found)" [ "$run_status" = 1 ]
  compare_faults "$name"
  check "$name: the ground truth predicts damaged file sectors (the test is not vacuous)" \
    [ "$(fact "$name" predicted)" -gt 0 ]
  echo "# precision=$(fact "$name" precision) recall=$(fact "$name" recall)"
  check "$name: the report's bad sectors are exactly the predicted ones (precision=1 recall=1)" \
    [ "$(fact "$name" precision)" = 1 -a "$(fact "$name" recall)" = 1 ]
  check "$name: every bad sector is classed $class" [ "$(fact "$name" classes)" = "$class" ]
  check "$name: report.txt's verdict line says so" \
    grep -Eq "^/data/[^:]+: [0-9]+ sectors? $class in [0-9]+ pages?" "$T/$name/report.txt"
}
