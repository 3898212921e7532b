#!/bin/sh
# An emulated POWER8 KVM-HV host for tests: Debian's ppc64el kernel booted
# by `qemu-system-ppc64 -M powernv8` (TCG, skiboot from Debian's qemu) with
# an initramfs, so the real kvm_hv module, its tracepoints and its sysfs
# knobs can be exercised on an x86 machine.
#
#   scripts/power8-host.sh image BIN...
#       builds (or reuses) $TOPOADVISOR_CACHE/power8-host: vmlinux and
#       base.cpio holding busybox-static, kvm.ko and kvm-hv.ko of that
#       kernel, trace-cmd, and every shared library BIN... (ppc64el ELF
#       files, e.g. a cross-built topoadvisor) and trace-cmd need, found in
#       the ppc64el sysroot (scripts/sysroot.sh).  The stamp records the
#       package versions, the sysroot's stamp, the libraries the BINs name
#       and this script's hash: the image is rebuilt only when one changes.
#       Also vmlinux-smt: the same kernel with the four instruction words
#       scripts/power8-smt-patch.py changes so that the secondary threads
#       of a vcore really run under QEMU (docs/power-host.md), and
#       smt-patch.txt saying which; or, for a kernel the patch does not
#       fit, smt-refused.txt saying why (vmlinux stays as Debian built it).
#       Prints the image directory.
#   scripts/power8-host.sh boot [--machine powernv8|powernv9] [--qemu BIN]
#                               [--smp SPEC] [--kernel stock|smt]
#                               [--timeout SECS] [--silent SECS]
#                               [--one-host-cpu] IN_DIR OUT_DIR
#       boots the image with IN_DIR's files at /in (an uncompressed cpio
#       appended to base.cpio, so the cached image is never rebuilt for
#       new test programs), runs `sh /in/run.sh` as root in /out, then
#       sends /out back over the console (tar | gzip | base64 between
#       markers) and powers off.  OUT_DIR receives /out's files, rc (run.sh's
#       exit status) and console.log.  Exit: 0 when the files came back (run.sh's
#       status is in OUT_DIR/rc), 1 when the host did not boot or hung
#       (qemu is killed at the timeout, default 600 s).  --kernel smt boots
#       vmlinux-smt (with --smp ...,threads=2 or more and QEMU 10: vcores
#       whose secondary threads run); it fails with the patcher's reason
#       where there is none.  --silent SECS also fails (and kills qemu)
#       once the kernel has started and the console has not grown for
#       SECS: an emulated host that stopped (docs/power-host.md).
#       --one-host-cpu runs QEMU on one host CPU: with threads > 1 its
#       vCPU threads running truly in parallel stall the emulated POWER8
#       in many boots; on one CPU they did not (docs/power-host.md).
#       For diagnosing the emulator: TA_POWER8_LOGLEVEL (the kernel's
#       console loglevel, default 1) and TA_POWER8_MONITOR=SOCKET (QEMU's
#       human monitor on that unix socket, e.g. for `info registers -a`).
# Inside: PATH has /in first; /sys/kernel/tracing is mounted; kvm and kvm_hv
# are loaded (their insmod output is in /out/modules.log).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
self=$top/scripts/power8-host.sh
cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}
out=$cache/power8-host
fetch="$top/scripts/debfetch.sh ppc64el"
die() { echo "power8-host: $*" >&2; exit 1; }
umask 022

# The libraries ELF files name (DT_NEEDED), recursively, resolved in the
# sysroot; prints their paths relative to it.  No ldd for a foreign
# architecture: readelf does it.
lib_closure() { # sysroot elf...
	sr=$1
	shift
	seen=" "
	queue="$*"
	while [ -n "$queue" ]; do
		# shellcheck disable=SC2086
		set -- $queue
		f=$1
		shift
		queue="$*"
		for lib in $(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
			case "$seen" in *" $lib "*) continue ;; esac
			seen="$seen$lib "
			found=""
			for d in lib/powerpc64le-linux-gnu usr/lib/powerpc64le-linux-gnu lib64 usr/lib; do
				[ -e "$sr/$d/$lib" ] && found=$d/$lib && break
			done
			[ -n "$found" ] || die "$lib (needed by $f) is not in the sysroot"
			echo "$found"
			queue="$queue $sr/$found"
		done
	done
}

image() {
	[ $# -ge 1 ] || die "image needs the binaries whose libraries it must hold"
	command -v readelf >/dev/null || die "readelf missing (binutils): scripts/deps.sh check"
	command -v cpio >/dev/null || die "cpio missing: scripts/deps.sh check"
	sr=$("$top/scripts/sysroot.sh") || die "no ppc64el sysroot"
	need=$(for b in "$@"; do readelf -d "$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; done |
		sort -u | tr '\n' ' ')
	head_new=$(
		echo "script $(sha256sum "$self" | cut -d' ' -f1)"
		echo "sysroot $(sha256sum "$sr/.stamp" | cut -d' ' -f1)"
		echo "needed $need"
	)
	# Written after the package lists' last refresh, with the same first
	# lines: current, without asking apt.
	lists=$($fetch lists) || die "no ppc64el package lists"
	if [ -f "$out/stamp" ] && [ -f "$out/vmlinux" ] && [ -f "$out/base.cpio" ] &&
		[ "$out/stamp" -nt "$lists" ] && [ "$(head -n 3 "$out/stamp")" = "$head_new" ]; then
		smt_kernel
		echo "$out"
		return 0
	fi
	kmeta=linux-image-powerpc64le
	kpkg=$($fetch depends "$kmeta" | grep '^linux-image-[0-9]' | head -n 1)
	[ -n "$kpkg" ] || die "cannot resolve $kmeta"
	kver=${kpkg#linux-image-}
	tools="busybox-static trace-cmd libtraceevent1-plugin"
	# shellcheck disable=SC2086
	stamp_new=$(
		echo "$head_new"
		$fetch version "$kpkg" $tools
	) || die "cannot resolve package versions"
	if [ -f "$out/stamp" ] && [ -f "$out/vmlinux" ] && [ -f "$out/base.cpio" ] &&
		[ "$(cat "$out/stamp")" = "$stamp_new" ]; then
		touch "$out/stamp"	# current as of these lists
		smt_kernel
		echo "$out"
		return 0
	fi
	mkdir -p "$cache"
	work=$(mktemp -d "$cache/.power8.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
	# shellcheck disable=SC2086
	$fetch extract "$work/pkgs" "$kpkg" $tools >/dev/null
	p=$work/pkgs
	root=$work/root
	mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/proc" \
		"$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/in" "$root/out" \
		"$root/lib/modules" "$root/etc"
	cp "$p/bin/busybox" "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	# KVM, and virtio-blk for the disk /out goes back on (in the order
	# their depends= strings need: there is no modules.dep in here).
	for m in arch/powerpc/kvm/kvm arch/powerpc/kvm/kvm-hv drivers/virtio/virtio_ring \
		drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
		drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci drivers/block/virtio_blk; do
		cp "$p/lib/modules/$kver/kernel/$m.ko" "$root/lib/modules/" || die "$m.ko not in $kpkg"
	done
	cp "$p/usr/bin/trace-cmd" "$root/usr/bin/"
	# trace-cmd's event plugins (the kvm ones print kvm_hv records).
	[ -d "$p/usr/lib/powerpc64le-linux-gnu/traceevent" ] &&
		mkdir -p "$root/usr/lib/powerpc64le-linux-gnu" &&
		cp -r "$p/usr/lib/powerpc64le-linux-gnu/traceevent" "$root/usr/lib/powerpc64le-linux-gnu/"
	# The dynamic loader and every library, at their usual paths.
	for f in lib64/ld64.so.2 $(lib_closure "$sr" "$p/usr/bin/trace-cmd" "$@" | sort -u); do
		mkdir -p "$root/$(dirname "$f")"
		cp -L "$sr/$f" "$root/$f"
	done
	cat >"$root/init" <<'INIT'
#!/bin/sh
# The emulated POWER8 host's init: kernel file systems, the KVM modules,
# then /in/run.sh; /out goes back over the console.
/bin/busybox --install -s /bin
export PATH=/in:/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
echo 1 >/proc/sys/kernel/printk
cd /out
{ insmod /lib/modules/kvm.ko && insmod /lib/modules/kvm-hv.ko; } >/out/modules.log 2>&1
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk; do
	insmod /lib/modules/$m.ko
done >/tmp/virtio.log 2>&1
rc=1
if [ -f /in/run.sh ]; then
	( sh /in/run.sh; echo $? >/tmp/rc ) 2>&1 | tee /out/run.log
	rc=$(cat /tmp/rc)
fi
echo "$rc" >/out/rc
# /out as a tar on the raw disk; the console only says it is done.
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if tar -C /out -cf /dev/vda . && sync; then
	echo "@@OUT-DONE rc=$rc"
else
	cat /tmp/virtio.log
	echo "@@OUT-FAILED no /dev/vda"
fi
poweroff -f
INIT
	chmod 0755 "$root/init"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$work/base.cpio"
	cp "$p/boot/vmlinux-$kver" "$work/vmlinux"
	mkdir -p "$out"
	mv -f "$work/vmlinux" "$out/vmlinux"
	mv -f "$work/base.cpio" "$out/base.cpio"
	printf '%s\n' "$stamp_new" >"$out/stamp"
	smt_kernel
	echo "$out"
}

# vmlinux-smt beside vmlinux (see the top), redone when vmlinux or the
# patcher changes; a kernel it does not fit leaves smt-refused.txt instead.
smt_kernel() {
	patcher=$top/scripts/power8-smt-patch.py
	want="patcher $(sha256sum "$patcher" | cut -d' ' -f1) vmlinux $(stat -c %s:%Y "$out/vmlinux")"
	[ -f "$out/smt.stamp" ] && [ "$(cat "$out/smt.stamp")" = "$want" ] && return 0
	rm -f "$out/vmlinux-smt" "$out/smt-patch.txt" "$out/smt-refused.txt" "$out/smt.stamp"
	if ! command -v python3 >/dev/null; then
		echo "python3 missing (scripts/deps.sh): no SMT-patched kernel" >"$out/smt-refused.txt"
	elif python3 "$patcher" "$out/vmlinux" "$out/vmlinux-smt.new" >"$out/smt-patch.new" \
		2>"$out/smt-refused.txt"; then
		mv -f "$out/vmlinux-smt.new" "$out/vmlinux-smt"
		mv -f "$out/smt-patch.new" "$out/smt-patch.txt"
		rm -f "$out/smt-refused.txt"
	else
		rm -f "$out/vmlinux-smt.new" "$out/smt-patch.new"
		[ -s "$out/smt-refused.txt" ] || echo "the SMT patch failed" >"$out/smt-refused.txt"
	fi
	echo "$want" >"$out/smt.stamp"
}

# boot_once: boots QEMU once (the variables boot() set) and waits for the
# host's "@@OUT-DONE" line, the timeout, or a firmware hang; sets
# boot_result to done, firmware-hung or timeout.  QEMU is gone on return.
boot_once() {
	: >"$log"
	# The disk /out comes back on: a raw tar written by the host's init.
	rm -f "$tmpd/out.img"
	truncate -s 256M "$tmpd/out.img"
	monitor=none
	[ -n "${TA_POWER8_MONITOR:-}" ] && monitor="unix:$TA_POWER8_MONITOR,server,nowait"
	# -smp/threads and the machine decide which vcores KVM can form.
	$pin "$qemu" -M "$machine" -m 2G -smp "$smp" -display none -monitor "$monitor" -net none \
		-serial "file:$log" -no-reboot \
		-drive "file=$tmpd/out.img,format=raw,if=none,id=out" \
		-device virtio-blk-pci,drive=out,bus=pcie.0 \
		-kernel "$out/$kernel" -initrd "$tmpd/initrd" \
		-append "console=hvc0 loglevel=${TA_POWER8_LOGLEVEL:-1} rdinit=/init" >"$tmpd/qemu.log" 2>&1 &
	qpid=$!
	waited=0
	last_size=-1
	quiet=0
	boot_result=timeout
	while kill -0 "$qpid" 2>/dev/null; do
		if grep -q '^@@OUT-' "$log" 2>/dev/null; then
			# poweroff -f follows: give it a moment, then make sure.
			sleep 2
			break
		fi
		if ! grep -q 'INIT: Starting kernel' "$log" 2>/dev/null &&
			[ "$(grep -c 'CPU [0-9a-f]* Backtrace:' "$log" 2>/dev/null)" -ge 2 ]; then
			boot_result=firmware-hung
			break
		fi
		[ $waited -ge "$timeout" ] && break
		# --silent: the kernel has started and the console has not grown
		# for that long.
		if [ "$silent" -gt 0 ] && grep -q 'INIT: Starting kernel' "$log" 2>/dev/null; then
			size=$(wc -c <"$log")
			if [ "$size" != "$last_size" ]; then
				last_size=$size
				quiet=0
			else
				quiet=$((quiet + 1))
				if [ $quiet -ge "$silent" ]; then
					boot_result=silent
					break
				fi
			fi
		fi
		sleep 1
		waited=$((waited + 1))
	done
	if kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
	fi
	wait "$qpid" 2>/dev/null || true
	qpid=""
	grep -q '^@@OUT-DONE' "$log" && boot_result=done
	return 0
}

boot() {
	machine=powernv8
	qemu=qemu-system-ppc64
	smp=1
	timeout=600
	silent=0
	one_cpu=0
	kernel=vmlinux
	while [ $# -gt 2 ]; do
		case "$1" in
		--machine) machine=$2; shift 2 ;;
		--qemu) qemu=$2; shift 2 ;;
		--smp) smp=$2; shift 2 ;;
		--kernel)
			case "$2" in
			stock) kernel=vmlinux ;;
			smt) kernel=vmlinux-smt ;;
			*) die "--kernel: stock or smt, not '$2'" ;;
			esac
			shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		--silent) silent=$2; shift 2 ;;
		--one-host-cpu) one_cpu=1; shift ;;
		*) die "unknown option $1" ;;
		esac
	done
	[ $# -eq 2 ] || die "usage: $0 boot [options] IN_DIR OUT_DIR"
	in=$1
	dest=$2
	[ -f "$out/base.cpio" ] || die "no image: run $0 image first"
	if [ ! -f "$out/$kernel" ]; then
		[ -f "$out/smt-refused.txt" ] && die "no SMT-patched kernel: $(cat "$out/smt-refused.txt")"
		die "no $out/$kernel: run $0 image first"
	fi
	[ -f "$in/run.sh" ] || die "$in/run.sh missing"
	# --one-host-cpu: every QEMU thread on the first CPU this script may
	# use (docs/power-host.md, "When the emulated POWER8 stalls").
	pin=""
	if [ "$one_cpu" = 1 ]; then
		command -v taskset >/dev/null || die "--one-host-cpu needs taskset (util-linux)"
		cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
		case "$cpu" in
		''|*[!0-9]*) die "--one-host-cpu: cannot read this process's CPUs: $(taskset -pc $$ 2>&1)" ;;
		esac
		pin="taskset -c $cpu"
	fi
	mkdir -p "$dest"
	tmpd=$(mktemp -d /tmp/power8-boot.XXXXXX)
	qpid=""
	trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null; rm -rf "$tmpd"' EXIT
	trap 'exit 130' INT TERM
	mkdir -p "$tmpd/ov/in"
	cp -R "$in/." "$tmpd/ov/in/"
	(cd "$tmpd/ov" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$tmpd/ov.cpio"
	cat "$out/base.cpio" "$tmpd/ov.cpio" >"$tmpd/initrd"
	log=$dest/console.log
	# skiboot (the emulated machine's firmware) now and then waits forever
	# for a PCI job it gave the second hardware thread, printing a backtrace
	# every 30 s: QEMU's thread never ran the job.  That is the emulator's,
	# not the code under test: such a boot is stopped at the second
	# backtrace before the kernel starts and tried again, up to 3 times.
	attempt=1
	while :; do
		boot_once
		case $boot_result in
		done) break ;;
		firmware-hung)
			cp "$log" "$dest/console.hung-$attempt.log"
			[ $attempt -lt 3 ] ||
				die "the $machine host's firmware hung in all 3 boots (skiboot waiting for a CPU job; consoles: $dest/console.hung-*.log)"
			echo "power8-host: boot $attempt: the firmware hung waiting for a CPU job (QEMU's second thread never ran it; console kept in $dest/console.hung-$attempt.log): booting again" >&2
			attempt=$((attempt + 1)) ;;
		silent)
			tail -n 5 "$log" >&2
			die "the $machine host stopped writing: its console did not grow for ${silent}s after the kernel started (console: $log)" ;;
		*)
			sed 's/^/qemu: /' "$tmpd/qemu.log" >&2
			tail -n 20 "$log" >&2
			die "the $machine host gave no output within ${timeout}s (console: $log)" ;;
		esac
	done
	tar -C "$dest" -xf "$tmpd/out.img" ||
		die "the output disk of the $machine host holds no tar (console: $log)"
}

[ $# -ge 1 ] || die "usage: $0 image BIN... | boot [options] IN_DIR OUT_DIR"
cmd=$1
shift
case "$cmd" in
image) image "$@" ;;
boot) boot "$@" ;;
*) die "unknown command '$cmd'" ;;
esac
