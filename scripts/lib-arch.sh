# shellcheck shell=bash
# lib-arch.sh: the guest architectures of share/arches, for the scripts
# that boot, fetch or pack for one of them (sourced; bash). Needs TOP.

# arch_names: the known architectures, blank-separated
arch_names () {
  local a rest names=""
  while read -r a rest; do
    case $a in ''|'#'*) continue ;; esac
    names+="${names:+ }$a"
  done <"$TOP/share/arches"
  printf '%s\n' "$names"
}

# arch_load ARCH: sets arch_name, arch_machine, arch_triplet, arch_qemu,
# arch_qemu_pkg, arch_board, arch_cpu ("" for the board's default),
# arch_console, arch_bus, arch_elf, arch_order, arch_flavour from ARCH's
# line; returns 1 for an unknown ARCH
# shellcheck disable=SC2034 # the arch_* are read by the scripts that source this
arch_load () {
  local a machine triplet qemu qemu_pkg board cpu console bus elf order flavour
  while read -r a machine triplet qemu qemu_pkg board cpu console bus elf order flavour; do
    [ "$a" = "$1" ] || continue
    arch_name=$a arch_machine=$machine arch_triplet=$triplet arch_qemu=$qemu
    arch_qemu_pkg=$qemu_pkg arch_board=$board arch_cpu=${cpu#-} arch_console=$console
    arch_bus=$bus arch_elf=$elf arch_order=$order arch_flavour=$flavour
    return 0
  done <"$TOP/share/arches"
  return 1
}

# arch_host: the architecture of this machine (the one whose machine is
# uname -m: bash's HOSTTYPE, no fork), empty when it is not in the table
arch_host () {
  local a machine rest m=${HOSTTYPE:-$(uname -m)}
  while read -r a machine rest; do
    case $a in ''|'#'*) continue ;; esac
    [ "$machine" = "$m" ] && { printf '%s\n' "$a"; return 0; }
  done <"$TOP/share/arches"
  return 1
}

# arch_of_qemu EMULATOR: the architecture QEMU's system emulator boots
# (qemu-system-ppc64: ppc64el); 1 when none
arch_of_qemu () {
  local a machine triplet qemu rest
  while read -r a machine triplet qemu rest; do
    case $a in ''|'#'*) continue ;; esac
    [ "$qemu" = "${1##*/}" ] && { printf '%s\n' "$a"; return 0; }
  done <"$TOP/share/arches"
  return 1
}

# arch_guest ARCH: the path of ARCH's wtrack-guest (the host's own build,
# or guest/ARCH/ for the others)
arch_guest () {
  if [ "$1" = "$(arch_host)" ]; then
    printf '%s\n' "$TOP/guest/wtrack-guest"
  else
    printf '%s\n' "$TOP/guest/$1/wtrack-guest"
  fi
}

# arch_cross_packages ARCH: the Debian packages of ARCH's cross compiler
# (after arch_load)
arch_cross_packages () { printf 'gcc-%s libc6-dev-%s-cross\n' "$arch_triplet" "$arch_name"; }

# arch_of_file FILE...: the architecture of each kernel or binary, one line
# each, read from its header: an ELF's machine and byte order; x86's boot
# sector ("HdrS" at 514: a bzImage); arm64's Image ("ARM\x64" at 56) or EFI
# zboot image ("zimg", PE machine 0xaa64); s390x's image ("S390EP" at
# 0x10008). An empty line for a file it cannot tell.
arch_of_file () {
  perl - "$TOP/share/arches" "$@" <<'PERL'
use strict; use warnings;
my ($table, @files) = @ARGV;
my %by_elf;
open(my $t, "<", $table) or die "cannot read $table: $!\n";
while (<$t>) {
  next if /^\s*(#|$)/;
  my @c = split;
  $by_elf{"$c[9] $c[10]"} = $c[0];
}
sub arch_of {
  open(my $f, "<:raw", $_[0]) or return "";
  my $h = "";
  read($f, $h, 4096);
  my $at = sub { my ($off, $len) = @_; return length($h) >= $off + $len ? substr($h, $off, $len) : ""; };
  if ($at->(0, 4) eq "\x7fELF") {
    my $lsb = ord($at->(5, 1)) == 1;
    my $machine = unpack($lsb ? "v" : "n", $at->(18, 2));
    return $by_elf{$machine . ($lsb ? " lsb" : " msb")} // "";
  }
  return "amd64" if $at->(514, 4) eq "HdrS";
  return "arm64" if $at->(56, 4) eq "ARM\x64";
  if ($at->(0, 2) eq "MZ" && $at->(4, 4) eq "zimg") {
    my $pe = unpack("V", $at->(60, 4));
    return unpack("v", $at->($pe + 4, 2)) == 0xaa64 ? "arm64" : "";
  }
  my $ep = "";
  seek($f, 0x10008, 0) and read($f, $ep, 6);
  return $ep eq "S390EP" ? "s390x" : "";
}
print arch_of($_), "\n" for @files;
PERL
}
