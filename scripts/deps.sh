#!/bin/sh
# Install exactly the Debian packages topoadvisor needs that are missing.
# Idempotent and quick when nothing is missing: `apt-get update` runs only when
# something must be installed.  Plain `apt-get install` from the host's
# Debian archive: apt's default release, so bookworm-backports (which the
# private apt states of scripts/debfetch.sh use for QEMU 10) never replaces a
# system package here.
# Usage: scripts/deps.sh [--list] [build|demo|check|bench]
#   build  what `make` needs to compile topoadvisor
#   demo   build + what `make demo` runs: libvirt, QEMU for x86 and what the
#          test guest image is made of
#   check  demo + what the test suites use (`make check`, `make fuzz`)
#   bench  the same as check (`make bench` records and replays traces)
# Each profile holds the one before it.  --list prints the profile's
# packages, one a line, and installs nothing (scripts/sysroot.sh takes the
# build profile's -dev packages from it).
set -eu

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
profile=${1:-check}

# Build: compiler, pkg-config and the -dev packages of every library we link
# (libzstd: the offline trace reader decompresses trace-cmd v7 chunks itself;
# libpcre2-dev: the command benchmark's parse regex; musl-tools: the front,
# topoadvisor itself, is linked against musl, whose start-up costs no CPUID
# traps: Makefile, FRONT_LIBC).
build="gcc make pkg-config libc6-dev musl-tools
libvirt-dev libtracefs-dev libtraceevent-dev libtracecmd-dev
libsqlite3-dev libyaml-dev libxml2-dev libglib2.0-dev libzstd-dev libjson-c-dev
libpcre2-dev"

# The demo: libvirt daemons and QEMU for real x86 guests, and what
# scripts/guest-image.sh builds the test guest from.  libvirt-daemon-system
# creates the libvirt-qemu user and qemu.conf that libvirtd's QEMU driver
# refuses to start without; the -sysv flavour because there is no systemd
# here.  The image copies busybox, qemu-ga, the benchmarks (stress-ng,
# sysbench, redis) and iputils' ping (`ping -f`, the demo's noise load:
# busybox's ping has no flood mode) from the host's packages, and cpio packs
# it.  tini reaps the QEMU processes libvirtd leaves (scripts/libvirtd-start.sh).
demo="libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86
libvirt-daemon-system libvirt-daemon-system-sysv tini
cpio busybox-static qemu-guest-agent stress-ng sysbench redis-server redis-tools iputils-ping"

# Tests: cmocka, the sqlite3 shell, trace-cmd (offline fixtures), chromium
# (headless) to render the HTML report in its integration test.  procps:
# pgrep/ps, which the hardening test uses to find processes a killed sweep
# left (setpriv and flock come with util-linux, essential).  qemu-system-ppc
# + qemu-system-data (it holds SLOF, the pseries firmware: bookworm's
# "qemu-slof" is only a name it provides, never "installed", so asking for it
# ran apt-get update on every make check) and binutils (readelf) build and
# boot the ppc64 test guest; gcc-powerpc64le-linux-gnu cross-builds topoadvisor and
# the KVM test guest for the emulated POWER8 host (make cross-ppc64el).
# linux-perf records perf.data and runs the seed's script (perf script -s);
# clang with libclang-rt-14-dev (only recommended by clang, and it holds
# libFuzzer) builds the readers' fuzzing harness; python3 runs the test
# helpers; zstd, xz-utils, qemu-utils and time for the fixtures and hosts the
# suites build.  slurmctld, slurmd, slurm-client and munge: the test cluster
# of the Slurm executor (tests/integration/slurm-*.sh start their own daemons
# in network namespaces; nothing runs by default).  openssh-server and
# openssh-client: the SSH executor's test hosts (tests/integration/ssh-*.sh
# start their own sshd in network namespaces, with keys they make).
check="libcmocka-dev sqlite3 trace-cmd linux-perf clang libclang-rt-14-dev
qemu-system-ppc qemu-system-data binutils qemu-utils zstd xz-utils python3 time
gcc-powerpc64le-linux-gnu procps chromium
slurmctld slurmd slurm-client munge openssh-server openssh-client"

case "$profile" in
build) pkgs=$build ;;
demo) pkgs="$build $demo" ;;
check|bench) pkgs="$build $demo $check" ;;
*) echo "usage: $0 [--list] [build|demo|check|bench]" >&2; exit 2 ;;
esac

if [ $list -eq 1 ]; then
	printf '%s\n' $pkgs
	exit 0
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
