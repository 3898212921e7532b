#!/bin/sh
# A private QEMU 10 for the tests that the system's QEMU 7.2 cannot run
# (pseries guests with threads > 1 under TCG, powernv8 with threads > 1).
# Debian bookworm-backports' qemu-system-ppc and the packages it loads
# modules and firmware from are downloaded (scripts/debfetch.sh amd64) and
# extracted into $TOPOADVISOR_CACHE/qemu10 - nothing is installed on the
# system.  Its libraries are bookworm's, already on the host.
#
# $TOPOADVISOR_CACHE/qemu10/bin/qemu-system-ppc64 is a wrapper that sets
# QEMU_MODULE_DIR and -L to the extracted tree, so libvirt can use it as a
# domain's <emulator>; the cache stays world-readable for libvirt-qemu.
# A stamp (package versions, this script's hash) makes a second run cheap.
# Usage: scripts/qemu10.sh   Prints the wrapper's path; exits 1 (with the
# reason) when that QEMU cannot be had.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}
out=$cache/qemu10
die() { echo "qemu10: $*" >&2; exit 1; }
umask 022

[ "$(dpkg --print-architecture)" = amd64 ] || die "the private QEMU is fetched for amd64 hosts only"
bp=bookworm-backports
pkgs="qemu-system-ppc/$bp qemu-system-common/$bp qemu-system-data/$bp qemu-system-gui/$bp
qemu-system-modules-opengl/$bp qemu-system-modules-spice/$bp qemu-block-extra/$bp"
wrapper=$out/bin/qemu-system-ppc64
self_hash="script $(sha256sum "$0" | cut -d' ' -f1)"
# A stamp written after the lists' last refresh by this script is current.
lists=$("$top/scripts/debfetch.sh" amd64 lists) || die "no amd64 package lists"
if [ -f "$out/stamp" ] && [ -x "$wrapper" ] && [ "$out/stamp" -nt "$lists" ] &&
	[ "$(head -n 1 "$out/stamp")" = "$self_hash" ]; then
	echo "$wrapper"
	exit 0
fi
# shellcheck disable=SC2086
stamp_new=$(
	echo "$self_hash"
	"$top/scripts/debfetch.sh" amd64 version $pkgs
) || die "bookworm-backports' QEMU is not available"
if [ -f "$out/stamp" ] && [ -x "$wrapper" ] && [ "$(cat "$out/stamp")" = "$stamp_new" ]; then
	touch "$out/stamp"	# current as of these lists
	echo "$wrapper"
	exit 0
fi

mkdir -p "$cache"
chmod 0755 "$cache"
work=$(mktemp -d "$cache/.qemu10.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# shellcheck disable=SC2086
"$top/scripts/debfetch.sh" amd64 extract "$work/root" $pkgs >/dev/null
bin=$work/root/usr/bin/qemu-system-ppc64
[ -x "$bin" ] || die "no qemu-system-ppc64 in qemu-system-ppc/$bp"
missing=$(ldd "$bin" | awk '/not found/ { print $1 }' | tr '\n' ' ')
[ -z "$missing" ] || die "qemu-system-ppc64 10 needs libraries the host lacks: $missing"
rm -rf "$out"
mkdir -p "$out/bin"
mv "$work/root" "$out/root"
cat >"$wrapper" <<EOF
#!/bin/sh
# bookworm-backports' QEMU, run from $out/root (scripts/qemu10.sh).
export QEMU_MODULE_DIR=$out/root/usr/lib/x86_64-linux-gnu/qemu
exec $out/root/usr/bin/qemu-system-ppc64 -L $out/root/usr/share/qemu "\$@"
EOF
chmod 0755 "$out" "$out/bin" "$wrapper"
printf '%s\n' "$stamp_new" >"$out/stamp"
echo "$wrapper"
