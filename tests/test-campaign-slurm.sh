#!/bin/bash
# test-campaign-slurm: scripts/wtrack-campaign --engine slurm on a real
# single-node Slurm cluster started here (munged, slurmctld, slurmd, all in
# $T, stopped by pid on every exit), against --engine local on the same
# campaign (test-campaign-local's: 2 kernels x 2 fs x 2 seeds, clean and
# lossy, 16 cells): the same cells, the same verdicts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
require_tools qemu-system-x86_64 nbdkit mkfs.ext4 jq python3 setsid \
  munged slurmctld slurmd sbatch squeue sinfo scancel
require_built "$WTRACK" "$PLUGIN" "$GUEST"
plan 12

C=$TOP/scripts/wtrack-campaign
S=$T/slurm
mkdir -p "$S/state" "$S/spool" "$S/munge"
export SLURM_CONF=$S/slurm.conf

daemon_pids=()
# Jobs outlive the daemons (slurmstepd): cancel them and wait for an empty
# queue first, then stop each daemon by its pid.
slurm_stop () {
  if [ ${#daemon_pids[@]} -gt 0 ]; then
    scancel --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 1 30); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  local p
  for p in ${daemon_pids[@]+"${daemon_pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
  for p in ${daemon_pids[@]+"${daemon_pids[@]}"}; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
}
on_exit slurm_stop

free_port () { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
mem_mib=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
user=$(id -un)

dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$S/munge/munge.key"
munged --foreground --force --socket="$S/munge/munge.sock" --key-file="$S/munge/munge.key" \
  --pid-file="$S/munge/munged.pid" --seed-file="$S/munge/munged.seed" 2>"$S/munged.log" &
daemon_pids+=($!)

cat >"$SLURM_CONF" <<EOF
ClusterName=wtracktest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
MinJobAge=4
ReturnToService=2
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem_mib State=UNKNOWN
PartitionName=wtrack Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

for _ in $(seq 1 50); do [ -S "$S/munge/munge.sock" ] && break; sleep 0.1; done
slurmctld -D -f "$SLURM_CONF" 2>"$S/slurmctld.err" &
daemon_pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" 2>"$S/slurmd.err" &
daemon_pids+=($!)

state=""
for _ in $(seq 1 60); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  for p in "${daemon_pids[@]}"; do kill -0 "$p" 2>/dev/null || break 2; done
  sleep 0.5
done
if [ "$state" = idle ]; then
  ok "single-node cluster up: node localhost idle (ports $ctld_port, $slurmd_port)"
else
  not_ok "single-node cluster up (node state: ${state:-none})"
  for f in "$S/munged.log" "$S/slurmctld.err" "$S/slurmctld.log" "$S/slurmd.err" "$S/slurmd.log"; do
    diag_file "$f" 10
  done
  bail_out
fi

# The campaign of test-campaign-local (2 kernels x ext4, xfs x linus2006 x
# 2 seeds) with its lossy variant: 16 cells, damage in the lossy ones.
cat >"$T/c.ini" <<'EOF'
[campaign]
kernels = debian:bookworm debian:bullseye
fs = ext4 xfs
workloads = linus2006
seeds = 1-2
size = 16M
disk-size = 320M
accel = tcg
no-cold = true
[clean]
[lossy]
plugin-opt = fault=vanish:p=0.002:seed=3
EOF

rc=0
"$C" run "$T/c.ini" --out "$T/slurm-out" --engine slurm --jobs 2 --partition wtrack \
  >"$T/slurm.out" 2>"$T/slurm.err" || rc=$?
sed 's/^/#   /' "$T/slurm.err" >&2
check "--engine slurm: exit 1 (the lossy cells are damaged)" [ "$rc" = 1 ]
check "one job array of 16 tasks was submitted" \
  grep -q -- '--array=0-15%2' "$T/slurm.err"
check "each task left its Slurm output in the campaign folder" \
  [ "$(ls "$T"/slurm-out/slurm/task-*_*.out 2>/dev/null | wc -l)" = 16 ]
check "the tasks ran as 1-CPU, guest memory + 512 MiB tasks" \
  grep -q -- '--cpus-per-task=1 --mem=1024M' "$T/slurm.err"

rc=0
"$C" run "$T/c.ini" --out "$T/local-out" --engine local --jobs 2 \
  >"$T/local.out" 2>"$T/local.err" || rc=$?
check "--engine local: exit 1" [ "$rc" = 1 ]
verdicts () { jq -r '.cells[] | "\(.id) \(.status) \(.bad_sectors > 0)"' "$1/summary.json" | sort; }
verdicts "$T/slurm-out" >"$T/slurm.verdicts"
verdicts "$T/local-out" >"$T/local.verdicts"
sed 's/^/#   slurm: /' "$T/slurm.verdicts" >&2
same_16 () { [ "$(wc -l <"$T/slurm.verdicts")" = 16 ] && cmp -s "$T/slurm.verdicts" "$T/local.verdicts"; }
check "slurm and local: the same 16 cells with the same verdicts" same_16
lossy_alone () {
  [ "$(grep -c '\.lossy\..* damaged true$' "$T/slurm.verdicts")" = 8 ] &&
    [ "$(grep -c ' damaged ' "$T/slurm.verdicts")" = 8 ]
}
check "the lossy cells, and only they, are damaged" lossy_alone
check "summary.txt, summary.json and results.xml agree (slurm)" \
  python3 "$TOP/tests/tools/campaign-agree.py" "$T/slurm-out"

# run --no-wait returns at once; while its job has tasks in squeue the
# folder is in use (the cells run on Slurm's nodes and hold no lock here).
cat >"$T/nowait.ini" <<'EOF'
[campaign]
kernels = debian:bookworm
fs = ext4
workloads = linus2006
seeds = 1-2
size = 4M
accel = tcg
no-cold = true
EOF
rc=0
"$C" run "$T/nowait.ini" --out "$T/nowait" --engine slurm --no-wait --partition wtrack \
  >"$T/nowait.out" 2>"$T/nowait.err" || rc=$?
job=$(tr -cd '0-9' <"$T/nowait.out")
rc2=0
"$C" collect "$T/nowait" >/dev/null 2>"$T/busy.err" || rc2=$?
sed 's/^/#   /' "$T/busy.err" >&2
check "--no-wait: exit 0, the job id printed ($job); collect while it runs refuses (exit $rc2), naming it" \
  test "$rc" = 0 -a -n "$job" -a "$rc2" = 2 -a -n "$(grep -F "Slurm job $job still running" "$T/busy.err")"
for _ in $(seq 300); do
  [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ] && break
  sleep 1
done
rc=0
"$C" collect "$T/nowait" >/dev/null 2>"$T/after.err" || rc=$?
check "--no-wait: once the job is over, collect runs (exit $rc: both cells clean)" test "$rc" = 0

slurm_stop
alive=""
for p in "${daemon_pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=" $p"; done
check "every daemon stopped by pid (munged, slurmctld, slurmd)" [ -z "$alive" ]
daemon_pids=()
done_testing
