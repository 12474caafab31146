#!/bin/bash
# The plugin as nbdkit expects one: `make install DESTDIR=...` puts it in
# nbdkit's plugin directory and its man page where man looks, the installed
# plugin's --dump-plugin prints its build facts, and the prefault helper
# started in .after_fork is stopped in .cleanup (before .unload).
. "$(dirname "$0")/lib.sh"
require_tools nbdkit pkg-config man manpath qemu-io
require_built "$PLUGIN" "$WTRACK"

plan 12

dest=$T/d
prefix=/usr/local
plugindir=$(pkg-config --variable=plugindir nbdkit)
installed=$dest$plugindir/nbdkit-wtrack-plugin.so

make -C "$TOP" install DESTDIR="$dest" PREFIX="$prefix" >"$T/install.log" 2>&1
status=$?
check "make install DESTDIR=... succeeds" test "$status" = 0
[ "$status" = 0 ] || diag_file "$T/install.log"
check "the plugin is in nbdkit's plugindir as nbdkit-wtrack-plugin.so" test -f "$installed"
nbdkit_plugindir=$(nbdkit --dump-config | sed -n 's/^plugindir=//p')
check "that plugindir is the one nbdkit searches ($nbdkit_plugindir)" \
  test "$plugindir" = "$nbdkit_plugindir"
check "the man page is in man1 under the prefix" \
  test -s "$dest$prefix/share/man/man1/nbdkit-wtrack-plugin.1"
man_finds () { man -M "$1" -w nbdkit-wtrack-plugin >/dev/null; }
check "man finds it there" man_finds "$dest$prefix/share/man"
check "that man tree is on man's own search path" \
  grep -qx "$prefix/share/man" <(manpath -g | tr ':' '\n')
# Every absolute path an install command names lies under DESTDIR.
outside=$(awk -v d="$dest/" '$1 == "install" {
    for (i = 2; i <= NF; i++) if ($i ~ /^\// && index($i, d) != 1) print $i }' \
  "$T/install.log")
check "nothing was installed outside DESTDIR${outside:+: $outside}" test -z "$outside"

# The facts --dump-plugin prints, each from an independent source.
nbdkit --dump-plugin "$installed" >"$T/dump" 2>"$T/dump.err" || diag_file "$T/dump.err"
fact () { sed -n "s/^$1=//p" "$T/dump"; }
want_version=$("$WTRACK" --version | awk '{print $2}')
want_log=$(sed -n 's/^#define WTLOG_VERSION \([0-9]*\)$/\1/p' "$TOP/common/wtlog.h")
if grep -qw avx2 /proc/cpuinfo; then want_hash=avx2; else want_hash=sse2; fi
if grep -qw sse4_2 /proc/cpuinfo; then want_crc=sse42; else want_crc=slice8; fi
check "wtrack_version is wtrack's ($want_version)" \
  test "$(fact wtrack_version)" = "$want_version"
check "wtrack_log_format_version is common/wtlog.h's ($want_log)" \
  test -n "$want_log" -a "$(fact wtrack_log_format_version)" = "$want_log"
check "wtrack_sector_hash is $want_hash on this CPU" \
  test "$(fact wtrack_sector_hash)" = "$want_hash"
check "wtrack_crc32c is $want_crc on this CPU" \
  test "$(fact wtrack_crc32c)" = "$want_crc"
[ "$t_failed" -eq 0 ] || diag_file "$T/dump"

# The helper's end, in nbdkit -v order: after .cleanup began, before .unload.
truncate -s 4M "$T/disk.img"
start_nbdkit srv "$T/sock" -v "$installed" "$T/disk.img" log="$T/w.wtlog"
qemu-io -f raw -c 'write -P 7 0 64k' "nbd+unix:///?socket=$T/sock" >/dev/null
stop_nbdkit srv
order=$(grep -E 'debug: wtrack: (cleanup|unload)|prefault helper stopped' "$T/srv.log" \
  | sed -E 's/.*(cleanup|unload|prefault helper stopped).*/\1/' | tr '\n' ,)
check "the prefault helper stops in .cleanup, before .unload ($order)" \
  test "$order" = "cleanup,prefault helper stopped,unload,"
[ "$order" = "cleanup,prefault helper stopped,unload," ] || diag_file "$T/srv.log"

done_testing
