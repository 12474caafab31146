# tests/lib-run.sh: whole runs for the end-to-end tests (source after lib.sh).
#
#   wtrack_run NAME [wtrack-run options...]   run into $T/NAME; status in
#                                            $run_status, seconds in $run_secs;
#                                            without the cold pass (one boot
#                                            less) unless cold_runs=yes
#   check_run_facts NAME                     the run's RESULT, manifest and
#                                            marks hold up (5 test points)

require_tools qemu-system-x86_64 nbdkit mkfs.ext4 cpio busybox
require_built "$PLUGIN" "$WTRACK" "$GUEST" "$TOP/tests/tools/runfacts"

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
