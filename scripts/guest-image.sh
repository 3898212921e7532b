#!/bin/sh
# Builds a test guest image: a Debian kernel and an initramfs holding
# busybox, qemu-ga and (x86_64) the benchmarks stress-ng, sysbench,
# redis-server, redis-benchmark and redis-cli, iputils' ping (`ping -f`, a
# noise load) and topoadvisor's ebizzy stand-in (experiments/guest-tools/
# ebizzy.c, built static here: Debian packages no ebizzy), all with their
# libraries.  The guest's loopback interface is up (redis listens on
# 127.0.0.1).
#
# Output, in $TOPOADVISOR_CACHE (default /var/cache/topoadvisor)/guest-ARCH:
# vmlinuz (on ppc64 the uncompressed vmlinux ELF), initrd, stamp, and
# kernel-deb: the path of the kernel's .deb in the cache, for scripts that
# need more of that kernel (scripts/svm-host.sh takes its kvm modules).
# The cache is world-traversable and its files are 0644 because libvirt
# hands kernel and initrd to the libvirt-qemu user.  The stamp records
# every input (package versions, this script's hash); a build
# whose stamp matches is skipped, so `make guest-image` is cheap to repeat.
#
# x86_64: the cloud kernel comes from `apt-get download` + `dpkg-deb -x`; the
# user-space binaries from the Debian packages scripts/deps.sh installs on
# the host (their versions are in the stamp), with the libraries ldd names.
# ppc64 (a pseries guest for qemu-system-ppc64 TCG): everything is
# downloaded as ppc64el packages through a private apt state under the
# cache (no `dpkg --add-architecture` on the host), libraries found by
# readelf; no benchmarks, only busybox and qemu-ga.
# Usage: scripts/guest-image.sh [--arch x86_64|ppc64] [--force]
# Prints the image directory.
set -eu

force=0
arch=x86_64
while [ $# -gt 0 ]; do
	case "$1" in
	--force) force=1 ;;
	--arch) arch=${2:-}; shift ;;
	*) echo "usage: $0 [--arch x86_64|ppc64] [--force]" >&2; exit 2 ;;
	esac
	shift
done

cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}
out=$cache/guest-$arch
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
ebizzy_src=$(cd "$(dirname "$0")/.." && pwd)/experiments/guest-tools/ebizzy.c

die() { echo "guest-image: $*" >&2; exit 1; }

case "$arch" in
x86_64)
	[ "$(uname -m)" = x86_64 ] || die "builds an x86_64 guest on x86_64 hosts only (host is $(uname -m))"
	bins="/usr/bin/busybox /usr/sbin/qemu-ga /usr/bin/stress-ng /usr/bin/sysbench
/usr/bin/redis-server /usr/bin/redis-benchmark /usr/bin/redis-cli /usr/bin/ping"
	for b in $bins; do
		[ -x "$b" ] || die "$b missing: run scripts/deps.sh check"
	done
	apt_opts=""
	kmeta=linux-image-cloud-amd64
	tools="busybox-static qemu-guest-agent stress-ng sysbench redis-server redis-tools iputils-ping"
	command -v cc >/dev/null || die "cc missing: run scripts/deps.sh check"
	;;
ppc64)
	command -v readelf >/dev/null || die "readelf missing (binutils): run scripts/deps.sh check"
	# A private apt state for ppc64el: the host's dpkg architectures stay as
	# they are.  One failing index (a mirror mid-sync) is tolerated; the
	# downloads below fail loudly if something needed is really missing.
	apt_dir=$cache/apt-ppc64el
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	apt_opts="-o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir/cache
-o APT::Architecture=ppc64el -o APT::Architectures::=ppc64el -o Dir::State::status=/dev/null"
	# shellcheck disable=SC2086
	apt-get $apt_opts -q update >"$apt_dir/update.log" 2>&1 || true
	kmeta=linux-image-powerpc64le
	# qemu-ga and the library packages it needs, recursively.
	# shellcheck disable=SC2086
	tools="busybox-static $(apt-cache $apt_opts depends --recurse --no-recommends \
		--no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances \
		--no-pre-depends qemu-guest-agent 2>/dev/null | grep -v '^ ' | grep -v '<' |
		sort -u | tr '\n' ' ')"
	;;
*) die "unknown arch '$arch' (x86_64 or ppc64)" ;;
esac

# The meta package names the current ABI's kernel package.
# shellcheck disable=SC2086
kpkg=$(apt-cache $apt_opts depends "$kmeta" 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[ -n "$kpkg" ] || die "cannot resolve $kmeta (run apt-get update)"
kver=${kpkg#linux-image-}

# Versions: of the host's installed packages on x86_64 (those binaries are
# copied), of the downloaded ones on ppc64.
version_of() { # package
	if [ "$arch" = x86_64 ] && [ "$1" != "$kpkg" ]; then
		dpkg-query -W -f='${Version}' "$1"
	else
		# shellcheck disable=SC2086
		apt-cache $apt_opts policy "$1" | awk '/Candidate:/ { print $2 }'
	fi
}
stamp_new=$(
	echo "script $(sha256sum "$self" | cut -d' ' -f1)"
	echo "arch $arch"
	if [ "$arch" = x86_64 ]; then
		echo "ebizzy $(sha256sum "$ebizzy_src" | cut -d' ' -f1) $(cc -dumpfullversion 2>/dev/null || cc -dumpversion)"
	fi
	for p in $kpkg $tools; do
		echo "pkg $p $(version_of "$p")"
	done
)
if [ $force -eq 0 ] && [ -f "$out/stamp" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd" ] &&
	[ -f "$(cat "$out/kernel-deb" 2>/dev/null)" ] &&
	[ "$(cat "$out/stamp")" = "$stamp_new" ]; then
	echo "$out"
	exit 0
fi

umask 022
mkdir -p "$cache"
chmod 0755 "$cache"
work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# Downloads packages (kept in the cache, keyed by version: re-fetching a
# 27 MB kernel whenever this script changes is pointless) and extracts them
# into $work/pkgs.
debs=$cache/debs-$arch
mkdir -p "$debs" "$work/pkgs"
fetch() { # package...
	for p in "$@"; do
		v=$(version_of "$p" | sed 's/:/%3a/')
		[ -n "$v" ] || die "no candidate for $p"
		f=$(ls "$debs/${p}_${v}_"*.deb 2>/dev/null | head -n 1 || true)
		if [ -z "$f" ]; then
			rm -f "$debs/${p}_"*.deb
			# shellcheck disable=SC2086
			(cd "$debs" && apt-get $apt_opts download -q "$p" >/dev/null 2>&1) ||
				die "apt-get download $p failed"
			f=$(ls "$debs/${p}_"*.deb | head -n 1)
		fi
		dpkg-deb -x "$f" "$work/pkgs"
	done
}

root=$work/root
mkdir -p "$root/bin" "$root/sbin" "$root/lib/modules" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp" "$root/run" "$root/var" "$root/etc" "$root/usr/bin" \
	"$root/usr/sbin"
ln -s ../run "$root/var/run"

copy_file() { # source, path in the guest
	[ -e "$root$2" ] && return 0
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2"
}

if [ "$arch" = x86_64 ]; then
	fetch "$kpkg"
	cp "$work/pkgs/boot/vmlinuz-$kver" "$work/vmlinuz"
	# Binaries at their usual paths, plus every library ldd resolves (and
	# the dynamic loader), so they run unchanged inside the guest.
	for b in $bins; do
		copy_file "$b" "$b"
		ldd "$b" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
			while read -r lib; do copy_file "$lib" "$lib"; done
	done
	# Static, so it needs nothing from the image; the guest's own CPUs run it.
	cc -std=gnu11 -O2 -static -pthread -o "$root/usr/bin/ebizzy" "$ebizzy_src" ||
		die "cannot build $ebizzy_src (static glibc: libc6-dev)"
else
	# shellcheck disable=SC2086
	fetch "$kpkg" $tools
	# pseries boots the ELF vmlinux directly.
	cp "$work/pkgs/boot/vmlinux-$kver" "$work/vmlinuz"
	p=$work/pkgs
	# Symlinks in the packages may be absolute (/lib64/ld64.so.2 ->
	# /lib/...): resolve them inside the extracted tree, not on the host.
	in_pkgs() { # path in the guest -> the real file under $p
		f=$1
		while [ -L "$p$f" ]; do
			t=$(readlink "$p$f")
			case "$t" in /*) f=$t ;; *) f=$(dirname "$f")/$t ;; esac
		done
		echo "$p$f"
	}
	copy_file "$p/bin/busybox" /usr/bin/busybox
	copy_file "$p/usr/sbin/qemu-ga" /usr/sbin/qemu-ga
	# No ldd for a foreign architecture: follow DT_NEEDED with readelf.
	interp=$(readelf -l "$p/usr/sbin/qemu-ga" | sed -n 's/.*interpreter: \(.*\)]/\1/p')
	copy_file "$(in_pkgs "$interp")" "$interp"
	queue=/usr/sbin/qemu-ga
	while [ -n "$queue" ]; do
		set -- $queue
		f=$1
		shift
		queue="$*"
		for lib in $(readelf -d "$root$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
			found=""
			for d in /lib/powerpc64le-linux-gnu /usr/lib/powerpc64le-linux-gnu /lib64; do
				[ -e "$p$d/$lib" ] && found=$d/$lib && break
			done
			[ -n "$found" ] || die "$lib (needed by $f) is in none of the downloaded packages"
			if [ ! -e "$root$found" ]; then
				copy_file "$(in_pkgs "$found")" "$found"
				queue="$queue $found"
			fi
		done
	done
fi
ln -s /usr/bin/busybox "$root/bin/sh"
# busybox's applets as links made here, not by `busybox --install` at every
# boot (~400 symlinks written under TCG); a foreign busybox cannot list its
# applets on this host, so there the guest's init installs them.
if [ "$arch" = x86_64 ]; then
	for a in $("$root/usr/bin/busybox" --list); do
		[ -e "$root/bin/$a" ] || ln -s /usr/bin/busybox "$root/bin/$a"
	done
fi
echo "127.0.0.1 localhost" >"$root/etc/hosts"

# virtio_console is a module in these kernels; this is its dependency order
# (there is no modules.dep in the initramfs).
mods="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev
drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci drivers/char/virtio_console"
for m in $mods; do
	f=$work/pkgs/lib/modules/$kver/kernel/$m.ko
	[ -f "$f" ] || die "$m.ko not in $kpkg"
	cp "$f" "$root/lib/modules/"
done
for m in $mods; do echo "${m##*/}"; done >"$root/lib/modules/order"

cat >"$root/init" <<'INIT'
#!/bin/sh
# Test guest init: mount the kernel file systems, bring the loopback
# interface up, load the virtio modules, find the guest agent's port and
# keep qemu-ga running for ever.
[ -e /bin/ls ] || /usr/bin/busybox --install -s /bin
# The real programs (iputils ping) before busybox's applets of the same name.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
ip link set lo up || echo "init: cannot bring lo up"
ip addr add 127.0.0.1/8 dev lo 2>/dev/null || true
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

# Uncompressed: inflating 60 MB of gzip cost ~0.5 s of every TCG boot.
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/initrd"

mkdir -p "$out"
chmod 0755 "$out"
chmod 0644 "$work/vmlinuz" "$work/initrd"
mv -f "$work/vmlinuz" "$out/vmlinuz"
mv -f "$work/initrd" "$out/initrd"
ls "$debs/${kpkg}_"*.deb | head -n 1 >"$out/kernel-deb"
printf '%s\n' "$stamp_new" >"$out/stamp"
chmod 0644 "$out/stamp" "$out/kernel-deb"
echo "$out"
