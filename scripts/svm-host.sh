#!/bin/sh
# Builds the nested-SVM test host: an x86_64 TCG guest (qemu-system-x86_64
# -cpu qemu64,+svm) whose own KVM (kvm-amd) produces real kvm:kvm_exit
# events.  The kernel is the test guest image's (scripts/guest-image.sh:
# Debian's cloud kernel, downloaded and cached there); this script adds an
# initramfs with busybox, that kernel's irqbypass, kvm and kvm-amd modules,
# trace-cmd, the given topoadvisor binary and KVM guest program, with every
# library ldd names, and an init that runs the checks of
# tests/integration/svm-exits.sh (its protocol is described there).
#
# Output, in $TOPOADVISOR_CACHE (default /var/cache/topoadvisor)/svm-host/KEY:
# vmlinuz, initrd (an uncompressed cpio: nothing to inflate under TCG),
# stamp.  The stamp holds the size and modification time of every file put
# in (cheap: they are ~80 MB) and this script's sha256; KEY is the stamp's
# hash, so checkouts testing different binaries at once never overwrite each
# other's image, and a build whose KEY exists is skipped.  Images unused for
# a day are removed.
# Usage: scripts/svm-host.sh TOPOADVISOR KVM_PROGRAM
# Prints the image directory.  Exit 3 when the kernel cannot be had (no
# package lists, offline), 1 on any other failure.
set -eu

die() { echo "svm-host: $*" >&2; exit 1; }
[ $# -eq 2 ] || { echo "usage: $0 TOPOADVISOR KVM_PROGRAM" >&2; exit 2; }
tool=$1
prog=$2
[ "$(uname -m)" = x86_64 ] || die "builds an x86_64 host on x86_64 only (this is $(uname -m))"
for f in "$tool" "$prog" /bin/busybox /usr/bin/trace-cmd; do
	[ -x "$f" ] || die "$f missing (run scripts/deps.sh check; make units)"
done

top=$(cd "$(dirname "$0")/.." && pwd)
self=$top/scripts/$(basename "$0")
cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}

image=$("$top/scripts/guest-image.sh") ||
	{ echo "svm-host: the guest image (its kernel) cannot be built" >&2; exit 3; }
kdeb=$(cat "$image/kernel-deb")
[ -f "$kdeb" ] || die "the guest image names no kernel package"

libs_of() { # binary -> the libraries ldd resolves, and the loader
	ldd "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'
}
files=$(
	for f in "$tool" "$prog" /bin/busybox /usr/bin/trace-cmd; do
		echo "$f"
		libs_of "$f"
	done | sort -u
)
stamp_new=$(
	echo "script $(sha256sum "$self" | cut -d' ' -f1)"
	for f in "$image/vmlinuz" $files "$top/tests/helpers/lsan.supp"; do
		echo "file $f $(stat -L -c '%s %Y' "$f")"
	done
)
images=$cache/svm-host
out=$images/$(printf '%s\n' "$stamp_new" | sha256sum | cut -c1-16)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp_new" ]; then
	touch "$out"
	echo "$out"
	exit 0
fi

umask 022
mkdir -p "$images"
find "$images" -mindepth 1 -maxdepth 1 -type d -mmin +1440 -exec rm -rf {} +
work=$(mktemp -d "$images/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
root=$work/root
mkdir -p "$root/bin" "$root/usr/bin" "$root/lib/modules" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp"

copy_file() { # source, path in the guest
	[ -e "$root$2" ] && return 0
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2"
}
for f in $files; do
	case "$f" in
	"$tool") copy_file "$f" /usr/bin/topoadvisor ;;
	"$prog") copy_file "$f" /usr/bin/kvmx86 ;;
	*) copy_file "$f" "$f" ;;
	esac
done
ln -s busybox "$root/bin/sh"
# A sanitized tool (make SAN=1) reports libtracefs's own leaks otherwise.
copy_file "$top/tests/helpers/lsan.supp" /etc/lsan.supp

# The kvm modules, in dependency order (their depends= strings; there is no
# modules.dep in the initramfs).
mkdir "$work/k"
dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$work/k" --wildcards \
	'./lib/modules/*/kernel/virt/lib/irqbypass.ko' \
	'./lib/modules/*/kernel/arch/x86/kvm/kvm.ko' \
	'./lib/modules/*/kernel/arch/x86/kvm/kvm-amd.ko' ||
	die "$kdeb lacks the kvm modules"
for m in irqbypass kvm kvm-amd; do
	find "$work/k" -name "$m.ko" -exec cp {} "$root/lib/modules/" \;
	[ -f "$root/lib/modules/$m.ko" ] || die "$m.ko not in $kdeb"
done

cat >"$root/init" <<'INIT'
#!/bin/sh
# Nested-SVM test host init.  Results go to the second serial port as
# sections "@@TA begin NAME", the base64 of NAME's bytes, "@@TA end NAME
# STATUS"; the kernel's console stays on the first.  The counts of the guest
# program come from the kernel command line (ta_outs=, ta_cpuids=,
# ta_vcpus=).
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin
export LSAN_OPTIONS=suppressions=/etc/lsan.supp:print_suppressions=0
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs nodev /sys/kernel/tracing
data=/dev/ttyS1
stty -F $data raw -echo
send() { # name file status
	{
		echo "@@TA begin $1"
		base64 "$2"
		echo "@@TA end $1 $3"
	} >$data
}
step() { # name command...: runs it, sends its stdout (NAME) and stderr (NAME.err)
	name=$1
	shift
	"$@" >/tmp/$name.out 2>/tmp/$name.err
	rc=$?
	send "$name" /tmp/$name.out $rc
	send "$name.err" /tmp/$name.err $rc
	echo "svm-host: $name exited $rc"
}
step kernel uname -r
step svmflag grep -c -w svm /proc/cpuinfo
for m in irqbypass kvm kvm-amd; do
	insmod /lib/modules/$m.ko || echo "svm-host: insmod $m failed"
done
step kvm ls -l /dev/kvm
step probe topoadvisor --json probe
step live topoadvisor --json trace --buffer-kib 1024 -- kvmx86 "$ta_outs" "$ta_cpuids" "$ta_vcpus"
cd /tmp
# The recording is kept small (it becomes a test fixture): without the
# kernel's symbols, which exits never needs, it is kilobytes, not a megabyte.
: >/tmp/no-kallsyms
mount --bind /tmp/no-kallsyms /proc/kallsyms
# The top buffer overwrites: a buffer bigger than the whole run loses nothing.
step record trace-cmd record -q -b 4096 -e kvm:kvm_exit -e kvm:kvm_userspace_exit -o /tmp/rec.dat \
	kvmx86 "$ta_outs" "$ta_cpuids" "$ta_vcpus"
send rec.dat /tmp/rec.dat 0
for e in kvm_exit kvm_userspace_exit; do
	send $e.format /sys/kernel/tracing/events/kvm/$e/format 0
done
echo "@@TA done" >$data
poweroff -f
INIT
chmod 0755 "$root/init"

mkdir "$work/image"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/image/initrd"
cp "$image/vmlinuz" "$work/image/vmlinuz"
printf '%s\n' "$stamp_new" >"$work/image/stamp"
# One rename: a concurrent build of the same inputs may have won; its image is as good.
mv -T "$work/image" "$out" 2>/dev/null || [ -f "$out/stamp" ] || die "cannot create $out"
echo "$out"
