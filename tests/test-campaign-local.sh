#!/bin/bash
# test-campaign-local: scripts/wtrack-campaign with the local engine, real
# boots: 2 kernels (bookworm, bullseye) x ext4, xfs x linus2006 x 2 seeds,
# stopped half way by one TERM and resumed; the same campaign with a lossy
# variant added (only the new cells run, damage exactly where the fault is;
# summary.html in Chromium); --until-fail; a guest past its timeout and one
# the watchdog kills; trixie boots; a build:PATCH kernel that cannot be
# built. One campaign folder serves most of it; cells skip the cold pass
# (one boot each, not two: the campaign, not the cold pass, is under test).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
require_tools qemu-system-x86_64 nbdkit mkfs.ext4 mkfs.xfs jq python3 apt-get dpkg-deb depmod setsid \
  chromium timeout
require_built "$WTRACK" "$PLUGIN" "$GUEST"
plan 42

C=$TOP/scripts/wtrack-campaign
AGREE=$TOP/tests/tools/campaign-agree.py
# no process left whose command line names the folder (wtrack-run, QEMU)
none_running () { ! pgrep -f "$1" >/dev/null; }

cat >"$T/a.ini" <<'EOF'
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
EOF
{ cat "$T/a.ini"; printf '[lossy]\nplugin-opt = fault=vanish:p=0.002:seed=3\n'; } >"$T/b.ini"

# ---- expand: ids come from the parameters, not the position ------------
"$C" expand "$T/a.ini" | cut -d' ' -f1 | sort >"$T/a.ids"
"$C" expand "$T/b.ini" | cut -d' ' -f1 | sort >"$T/b.ids"
check "expand: 8 cells, 16 with the lossy variant" \
  [ "$(wc -l <"$T/a.ids")" = 8 -a "$(wc -l <"$T/b.ids")" = 16 ]
check "expand: every id of the smaller campaign is kept when a variant is added" \
  [ -z "$(comm -23 "$T/a.ids" "$T/b.ids")" ]
check "expand: ids are unique" [ "$(sort -u "$T/b.ids" | wc -l)" = 16 ]
rc=0; "$C" expand --fs "ext4 zfs" 2>"$T/bad.err" >/dev/null || rc=$?
check "expand: an unknown filesystem is bad usage (exit 4), named" \
  [ "$rc" = 4 -a -n "$(grep zfs "$T/bad.err")" ]
rc=0; "$C" run "$T/a.ini" 2>/dev/null || rc=$?
check "run without --out: exit 4" [ "$rc" = 4 ]
# other architectures' kernels: their ids and --arch; debian:R/amd64 is debian:R
"$C" expand --kernels 'debian:bookworm debian:bookworm/ppc64el debian:trixie/ppc64el-64k debian:bookworm/amd64' \
  >"$T/arch.plan"
check "expand: debian:R/ARCH[-FLAVOUR] ids say R-ARCH[-FLAVOUR]; debian:bookworm/amd64 is debian:bookworm" \
  [ "$(cut -d' ' -f1 "$T/arch.plan" | tr '\n' ' ')" \
    = "bookworm.ext4.linus2006.s1 bookworm-ppc64el.ext4.linus2006.s1 trixie-ppc64el-64k.ext4.linus2006.s1 " ]
check "expand: another architecture's cells run with --arch, amd64's without" \
  [ "$(grep -c "'--arch' 'ppc64el'" "$T/arch.plan")" = 2 -a "$(grep -c -- "--arch" "$T/arch.plan")" = 2 ]
rc=0; "$C" expand --kernels 'debian:bookworm/sparc' 2>"$T/bad.err" >/dev/null || rc=$?
check "expand: an unknown architecture is bad usage (exit 4), named" \
  [ "$rc" = 4 -a -n "$(grep 'unknown architecture in debian:bookworm/sparc' "$T/bad.err")" ]

# ---- the campaign, killed half way, then resumed ------------------------
out=$T/camp
"$C" run "$T/a.ini" --out "$out" --jobs 2 >"$T/first.out" 2>"$T/first.err" &
pid=$!
for _ in $(seq 1 600); do
  ls "$out"/cells/*/cell.ini >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 1
done
# one TERM, as a user's kill would: the campaign stops at once
start=$SECONDS
kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
stop_secs=$((SECONDS - start))
rc=0; wait "$pid" || rc=$?
done_before=$(ls "$out"/cells/*/cell.ini 2>/dev/null | wc -l)
diag "killed the campaign (exit $rc after ${stop_secs} s) with $done_before cells done"
stat -c '%n %i %Y' "$out"/cells/*/cell.ini >"$T/done-before.stat" 2>/dev/null || true
check "one TERM stops the campaign within 20 s ($stop_secs s), exit 143" \
  [ "$rc" = 143 -a "$stop_secs" -le 20 ]
check "killed half way: some cells done, not all ($done_before of 8)" \
  [ "$done_before" -ge 1 -a "$done_before" -lt 8 ]
check "killed: no process of the campaign's cells is left" none_running "$out/cells/"

rc=0
"$C" run "$T/a.ini" --out "$out" --jobs 2 --resume >"$T/resume.out" 2>"$T/resume.err" || rc=$?
sed 's/^/#   /' "$T/resume.err" >&2
ran=$(grep -c '^wtrack-campaign: \[' "$T/resume.err" || true)
check "--resume: exit 0, all 8 cells clean" \
  [ "$rc" = 0 -a "$(jq '.counts.clean' "$out/summary.json")" = 8 ]
check "--resume ran only the $((8 - done_before)) missing cells (ran $ran)" \
  [ "$ran" = $((8 - done_before)) ]
# shellcheck disable=SC2046 # the paths hold no blanks
check "--resume left the finished cells alone" \
  cmp -s "$T/done-before.stat" <(stat -c '%n %i %Y' $(cut -d' ' -f1 "$T/done-before.stat"))
check "summary.txt, summary.json and results.xml agree (clean campaign)" \
  python3 "$AGREE" "$out"
check "summary.json: the 8 ids of expand" \
  [ "$(jq -r '.cells[].id' "$out/summary.json" | sort | tr '\n' ' ')" = "$(tr '\n' ' ' <"$T/a.ids")" ]
cell=$out/cells/$(head -n 1 "$T/a.ids")
check "a clean cell keeps report.json, report.txt and console.log" \
  [ -f "$cell/report.json" -a -f "$cell/report.txt" -a -f "$cell/console.log" ]
check "a clean cell dropped its images" [ ! -e "$cell/disk.img" -a ! -e "$cell/base.img" ]
check "every kernel row is there: bookworm and bullseye" \
  [ "$(grep -c -E '^debian:(bookworm|bullseye) ' "$out/summary.txt")" = 2 ]
check "bullseye's cells ran a 5.10 kernel" \
  grep -q 'kernel_path=.*/vmlinuz-5\.10\.' "$out/cells/bullseye.ext4.clean.linus2006.s1/cell.ini"
check "summary.json: every cell and grid entry says arch amd64; cells their guests' 4096-byte pages" \
  [ "$(jq -r '[.cells[] | "\(.arch) \(.page_size)"] + [.grid[] | .arch] | unique | join(",")' "$out/summary.json")" \
    = "amd64,amd64 4096" ]

# ---- the same campaign with a lossy variant: only the new cells run -----
rc=0
"$C" run "$T/b.ini" --out "$out" --jobs 2 --resume >"$T/lossy.out" 2>"$T/lossy.err" || rc=$?
sed 's/^/#   /' "$T/lossy.err" >&2
check "lossy: exit 1 (damage found)" [ "$rc" = 1 ]
check "lossy: only the 8 new cells ran" \
  [ "$(grep -c '^wtrack-campaign: \[' "$T/lossy.err")" = 8 ]
jq -r '.cells[] | select(.status == "damaged") | .id' "$out/summary.json" | sort >"$T/damaged.ids"
grep '\.lossy\.' "$T/b.ids" >"$T/lossy.ids"
check "damage in exactly the 8 cells that carry the fault" cmp -s "$T/damaged.ids" "$T/lossy.ids"
check "summary.txt, summary.json and results.xml agree (lossy campaign)" \
  python3 "$AGREE" "$out"
bad=$out/cells/$(head -n 1 "$T/lossy.ids")
check "a damaged cell keeps everything; wtrack check on it finds the damage (exit 1)" \
  bash -c "[ -f '$bad/disk.img' ] && [ -f '$bad/writes.wtlog' ] && { '$WTRACK' check '$bad' >/dev/null; [ \$? = 1 ]; }"
# The counts as the cell's own report.json has them (not an empty count,
# not lost=0): the number of bad sectors and the lost class, both non-zero.
nbad=$(jq '.bad_sectors' "$bad/report.json")
nlost=$(jq '.by_class.lost' "$bad/report.json")
check "summary.txt names the damaged cell, its $nbad bad sectors, lost=$nlost and its folder" \
  test "$nbad" -gt 0 -a "$nlost" -gt 0 -a -n "$(grep -E "^  $(basename "$bad"): $nbad bad sectors \((.* )?lost=${nlost}[ )].*: $bad\$" "$out/summary.txt")"

# summary.html as a person opens it: headless Chromium, no console message,
# a grid cell per summary.json grid entry, a link per damaged cell
DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --disable-gpu --no-sandbox \
  --no-first-run --disable-extensions --enable-logging=stderr --v=0 --user-data-dir="$T/chrome" \
  --dump-dom "file://$out/summary.html" >"$T/summary.dom" 2>"$T/chrome.err" || true
check "summary.html renders in Chromium without a console message" \
  eval "grep -q 'data-rendered=\"yes\"' '$T/summary.dom' && ! grep -hE ':CONSOLE|Uncaught' '$T/chrome.err' >&2"
check "summary.html: each kernel row names its architecture and page size" \
  [ "$(grep -o '<th class="kernel" data-arch="amd64">debian:[a-z]* (amd64, 4.0 KiB pages)</th>' "$T/summary.dom" | wc -l)" = 2 ]
check "summary.html: one coloured grid cell per grid entry" \
  [ "$(grep -o 'class="gcell"' "$T/summary.dom" | wc -l)" = "$(jq '.grid | length' "$out/summary.json")" ]
links_ok () {
  local id
  while read -r id; do
    grep -qF "href=\"cells/$id/report.html\"" "$T/summary.dom" && [ -f "$out/cells/$id/report.html" ] || return 1
  done <"$T/lossy.ids"
}
check "summary.html links each damaged cell to its report.html, which exists" links_ok

# ---- --until-fail: fewer cells launched ---------------------------------
rc=0
"$C" run --kernels debian:bookworm --fs ext4 --seeds 1-3 --set size=16M --set accel=tcg \
  --set no-cold=true --set plugin-opt=fault=vanish:p=0.002:seed=3 --jobs 1 --until-fail \
  --out "$T/uf" >/dev/null 2>"$T/uf.err" || rc=$?
launched=$(ls "$T"/uf/cells/*/cell.ini 2>/dev/null | wc -l)
check "--until-fail: exit 1 and fewer cells launched than the campaign's 3 ($launched)" \
  [ "$rc" = 1 -a "$launched" -lt 3 ]
check "--until-fail: the cells not launched are 'not_run'" \
  [ "$(jq '.counts.not_run' "$T/uf/summary.json")" = $((3 - launched)) ]

# ---- one more campaign, each cell a case of its own (2 boots) -----------
# trixie (6.12, usr-merged, .ko.xz modules) boots; its [slow] variant runs
# past the guest's own --timeout (the guest kills the workload, wtrack-run
# exits 3); a build:PATCH kernel whose patch does not apply is an error.
printf -- '--- a/Makefile\n+++ b/Makefile\n@@ -1,1 +1,1 @@\n-no such line in any kernel\n+x\n' >"$T/bad.patch"
cat >"$T/m.ini" <<EOF
[campaign]
kernels = debian:trixie build:$T/bad.patch
workloads = linus2006
size = 16M
accel = tcg
no-cold = true
[clean]
[slow]
timeout = 5
passes = 400
EOF
rc=0
"$C" run "$T/m.ini" --out "$T/m" --jobs 2 >/dev/null 2>"$T/m.err" || rc=$?
sed 's/^/#   /' "$T/m.err" >&2
status_of () { jq -r --arg id "$1" '.cells[] | select(.id == $id) | .status' "$T/m/summary.json"; }
error_of () { jq -r --arg id "$1" '.cells[] | select(.id == $id) | .error' "$T/m/summary.json"; }
check "a campaign with cells in error: exit 2" [ "$rc" = 2 ]
check "debian:trixie: its cell is clean" [ "$(status_of trixie.ext4.clean.linus2006.s1)" = clean ]
slow_error=$(error_of trixie.ext4.slow.linus2006.s1)
diag "the slow cell: $slow_error"
check "a guest past its own --timeout: an error cell with wtrack-run's exit 3 and the reason" \
  [ "$(status_of trixie.ext4.slow.linus2006.s1)" = error -a -n "$(grep 'wtrack-run exit 3: .*timeout' <<<"$slow_error")" ]
check "build:PATCH whose patch does not apply: both its cells are errors naming the kernel" \
  [ "$(jq '[.cells[] | select(.kernel | startswith("build:")) | select(.status == "error") | select(.error | test("kernel build:"))] | length' "$T/m/summary.json")" = 2 ]
check "build:PATCH: build-kernel was run with that patch" grep -qF "patch failed: $T/bad.patch" "$T/m.err"
"$TOP/scripts/get-kernel" --list >"$T/kernels.list" || true
check "get-kernel --list shows the bullseye and trixie kernels" \
  eval "grep -q ' bullseye ' '$T/kernels.list' && grep -q '^6\.12\..* trixie ' '$T/kernels.list'"

# ---- a guest that does not end in time: the watchdog, the campaign ends --
rc=0; start=$SECONDS
"$C" run --kernels debian:bookworm --set size=16M --set accel=tcg --set timeout=5 \
  --set no-cold=true --watchdog-margin 1 --out "$T/hang" >/dev/null 2>"$T/hang.err" || rc=$?
check "a cell past timeout + margin: exit 2 in $((SECONDS - start)) s" [ "$rc" = 2 ]
check "it is reported as an error by the watchdog" \
  [ "$(jq -r '.cells[0].status' "$T/hang/summary.json")" = error \
    -a -n "$(jq -r '.cells[0].error' "$T/hang/summary.json" | grep watchdog)" ]
check "no process of the hung cell is left" none_running "$T/hang/cells/"
done_testing
