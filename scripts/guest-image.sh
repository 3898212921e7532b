#!/bin/sh
# Builds the x86_64 test guest image: Debian's cloud kernel and an initramfs
# holding busybox, qemu-ga and the benchmarks (stress-ng, sysbench,
# redis-server, redis-benchmark) with their libraries.
#
# Output, in $TOPOADVISOR_CACHE (default /var/cache/topoadvisor)/guest-x86_64:
# vmlinuz, initrd, stamp.  The cache is world-traversable and its files are
# 0644 because libvirt hands kernel and initrd to the libvirt-qemu user.  The
# stamp records every input (package versions, this script's hash); a build
# whose stamp matches is skipped, so `make guest-image` is cheap to repeat.
#
# The kernel comes from `apt-get download` + `dpkg-deb -x`; the user-space
# binaries from the Debian packages scripts/deps.sh installs on the host
# (their versions are in the stamp), with the libraries ldd names.
# Usage: scripts/guest-image.sh [--force]   Prints the image directory.
set -eu

force=0
[ "${1:-}" = "--force" ] && force=1

cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}
out=$cache/guest-x86_64
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

die() { echo "guest-image: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "only builds an x86_64 guest (host is $(uname -m))"
bins="/usr/bin/busybox /usr/sbin/qemu-ga /usr/bin/stress-ng /usr/bin/sysbench
/usr/bin/redis-server /usr/bin/redis-benchmark"
for b in $bins; do
	[ -x "$b" ] || die "$b missing: run scripts/deps.sh check"
done

# The meta package names the current ABI's kernel package.
kpkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[ -n "$kpkg" ] || die "cannot resolve linux-image-cloud-amd64 (run apt-get update)"
kver_pkg=$(apt-cache policy "$kpkg" | awk '/Candidate:/ { print $2 }')

stamp_new=$(
	echo "script $(sha256sum "$self" | cut -d' ' -f1)"
	echo "kernel $kpkg $kver_pkg"
	for p in busybox-static qemu-guest-agent stress-ng sysbench redis-server redis-tools; do
		echo "pkg $p $(dpkg-query -W -f='${Version}' "$p")"
	done
)
if [ $force -eq 0 ] && [ -f "$out/stamp" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd" ] &&
	[ "$(cat "$out/stamp")" = "$stamp_new" ]; then
	echo "$out"
	exit 0
fi

umask 022
mkdir -p "$cache"
chmod 0755 "$cache"
work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# The kernel package (kept in the cache: re-downloading 27 MB per change of
# this script is pointless).
debs=$cache/debs
mkdir -p "$debs"
deb=$(ls "$debs/${kpkg}_"*.deb 2>/dev/null | head -n 1 || true)
case "$deb" in *"_$(echo "$kver_pkg" | sed 's/:/%3a/')_"*) ;; *)
	rm -f "$debs/${kpkg}_"*.deb
	(cd "$work" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
		die "apt-get download $kpkg failed"
	mv "$work"/"${kpkg}"_*.deb "$debs/"
	deb=$(ls "$debs/${kpkg}_"*.deb | head -n 1)
	;;
esac
dpkg-deb -x "$deb" "$work/kernel"
kver=${kpkg#linux-image-}
cp "$work/kernel/boot/vmlinuz-$kver" "$work/vmlinuz"

root=$work/root
mkdir -p "$root/bin" "$root/sbin" "$root/lib/modules" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp" "$root/run" "$root/var" "$root/etc" "$root/usr/bin" \
	"$root/usr/sbin"
ln -s ../run "$root/var/run"

# Binaries at their usual paths, plus every library ldd resolves (and the
# dynamic loader), so they run unchanged inside the guest.
copy_file() { # path
	[ -e "$root$1" ] && return 0
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}
for b in $bins; do
	copy_file "$b"
	ldd "$b" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
		while read -r lib; do copy_file "$lib"; done
done
ln -s /usr/bin/busybox "$root/bin/sh"

# virtio_console is a module in the cloud kernel; this is its dependency
# order (there is no modules.dep in the initramfs).
mods="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev
drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci drivers/char/virtio_console"
for m in $mods; do
	f=$work/kernel/lib/modules/$kver/kernel/$m.ko
	[ -f "$f" ] || die "$m.ko not in $kpkg"
	cp "$f" "$root/lib/modules/"
done
for m in $mods; do echo "${m##*/}"; done >"$root/lib/modules/order"

cat >"$root/init" <<'INIT'
#!/bin/sh
# Test guest init: mount the kernel file systems, load the virtio modules,
# find the guest agent's port and keep qemu-ga running for ever.
/usr/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
for m in $(cat /lib/modules/order); do
	insmod "/lib/modules/$m.ko" || echo "init: insmod $m failed"
done
# No udev: the port is the vportNpM whose name is the agent's channel.
port=
i=0
while [ -z "$port" ] && [ $i -lt 100 ]; do
	for d in /sys/class/virtio-ports/*; do
		[ "$(cat "$d/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] && port=/dev/${d##*/}
	done
	[ -z "$port" ] && sleep 0.1
	i=$((i + 1))
done
if [ -z "$port" ]; then
	echo "init: no org.qemu.guest_agent.0 port; powering off"
	poweroff -f
fi
echo "init: qemu-ga on $port"
while true; do
	qemu-ga -m virtio-serial -p "$port"
	sleep 0.2
done
INIT
chmod 0755 "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -6 >"$work/initrd"

mkdir -p "$out"
chmod 0755 "$out"
chmod 0644 "$work/vmlinuz" "$work/initrd"
mv -f "$work/vmlinuz" "$out/vmlinuz"
mv -f "$work/initrd" "$out/initrd"
printf '%s\n' "$stamp_new" >"$out/stamp"
chmod 0644 "$out/stamp"
echo "$out"
