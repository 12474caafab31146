#!/bin/bash
# tests/asan-run.sh: runs a shell test with the sanitized builds (make asan).
#
# make check links tests/asan/test-NAME.sh to this script; run through such
# a link, it runs tests/test-NAME.sh with WTRACK=checker/wtrack-asan and
# PLUGIN=plugin/nbdkit-wtrack-plugin-asan.so, and passes its TAP through.
# A sanitizer report fails the test even when the test expected the tool
# to fail: reports go to files (ASan's and UBSan's log_path), and when any
# was written they are printed as comments and the exit status is 1.
#
# nbdkit is not sanitized, and the ASan runtime must be the first library
# a process loads, so nbdkit (and only nbdkit: python, qemu-io and fio stay
# as they are) is run through a shim first in PATH that preloads the
# libasan.so the plugin was linked with. Leak checking is off inside
# nbdkit (detect_leaks=0): nbdkit does not free its own allocations before
# it exits, which LeakSanitizer would report against every test. wtrack
# keeps leak checking on. One gap: UBSan inside the plugin ignores log_path
# (its runtime sits in a library nbdkit loads, beside the preloaded ASan);
# with halt_on_error its report (on nbdkit's stderr) stops nbdkit with
# status 99, and the test's clients fail.
#
# Its work folder (the shim, the reports) is lib.sh's $T: removed at exit
# unless KEEP_TEST_DIRS=1.
name=$(basename "$0")
# Run as tests/asan/test-NAME.sh: lib.sh is one folder up.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test=$TOP/tests/$name
export WTRACK=$TOP/checker/wtrack-asan
export PLUGIN=$TOP/plugin/nbdkit-wtrack-plugin-asan.so

fail () { echo "1..1"; echo "not ok 1 - $name under ASan+UBSan: $*"; exit 1; }
[ -x "$test" ] || fail "no test $test"
for f in "$WTRACK" "$PLUGIN"; do
  [ -e "$f" ] || fail "not built: $f (make asan)"
done
libasan=$(ldd "$PLUGIN" | awk '$1 ~ /^libasan\.so/ { print $3 }')
[ -f "$libasan" ] || fail "cannot find the libasan.so $PLUGIN needs (ldd)"
nbdkit=$(PATH=$PATH:/usr/sbin:/sbin command -v nbdkit) || fail "missing tool: nbdkit"

work=$T
mkdir "$work/bin" "$work/reports"
cat > "$work/bin/nbdkit" <<SHIM
#!/bin/sh
LD_PRELOAD=$libasan\${LD_PRELOAD:+:\$LD_PRELOAD} \\
ASAN_OPTIONS=\$ASAN_OPTIONS:detect_leaks=0 exec $nbdkit "\$@"
SHIM
chmod +x "$work/bin/nbdkit"
export PATH=$work/bin:$PATH
# abort_on_error=0 with a distinct exitcode: a report never looks like one
# of wtrack's own statuses (0, 1, 2), and the log files say it anyway.
export ASAN_OPTIONS=log_path=$work/reports/asan:exitcode=99:detect_stack_use_after_return=1:fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
export UBSAN_OPTIONS=log_path=$work/reports/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=99${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}

"$test"
status=$?
reports=$(find "$work/reports" -type f | sort)
if [ -n "$reports" ]; then
  for r in $reports; do
    echo "# sanitizer report $(basename "$r"):"
    sed 's/^/#   /' "$r"
  done >&2
  echo "# $name: sanitizer reports above: failing the test" >&2
  exit 1
fi
exit $status
