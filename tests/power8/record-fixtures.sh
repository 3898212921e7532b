#!/bin/sh
# Records the committed real-kernel fixtures in tests/fixtures/real/.  Not
# part of `make check`: run it by hand when the fixtures should be recorded
# again, then commit the result.
#
# tests/power8/record-fixtures.sh [HCALLS]   (default 20)
#   power8/ and power9/: for POWER8 (-M powernv8: kvmppc_run_core fires)
#   and POWER9 (-M powernv9: it never does) one trace-cmd recording of
#   kvmppc-guest making HCALLS hypercalls on the real kvm_hv tracepoints,
#   the kernel's event format files, and what the program and the kernel
#   said (tests/power8/record.sh inside the emulated host).
# tests/power8/record-fixtures.sh --smt [SECONDS]   (default 2)
#   power8-smt/ and power8-smt-stock/: one vcore of two vCPUs on
#   powernv8 with two threads per core (QEMU 10), vCPU 0 spinning and
#   vCPU 1 idle, spinning or making hypercalls for SECONDS each
#   (tests/power8/smt.sh): with the patched kernel, whose secondary
#   threads run, and with Debian's as it is, whose secondaries never
#   execute a guest instruction - there n_runnable = 2 is the kernel's
#   bookkeeping only.  Each mode's recording, what the program and the
#   live trace said, and tests/power8/windows.py's reading of it.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
smt=""
if [ "${1:-}" = --smt ]; then
	smt=1
	shift
fi
n=${1:-20}
make -s -C "$top" cross-ppc64el
guest=$top/build-ppc64el/tests/kvmppc-guest
img=$("$top/scripts/power8-host.sh" image "$top/build-ppc64el/topoadvisor" | tail -n 1)
tmp=$(mktemp -d /tmp/ta-fixtures.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir "$tmp/in"
cp "$guest" "$tmp/in/"
if [ -z "$smt" ]; then
	cp "$top/tests/power8/record.sh" "$tmp/in/run.sh"
	echo "$n" >"$tmp/in/hcalls"
	for m in power8 power9; do
		"$top/scripts/power8-host.sh" boot --machine "powernv${m#power}" --timeout 300 \
			"$tmp/in" "$tmp/$m"
		[ "$(cat "$tmp/$m/rc")" = 0 ] || { cat "$tmp/$m/run.log"; exit 1; }
		d=$top/tests/fixtures/real/$m
		rm -rf "$d"
		mkdir -p "$d"
		cp -r "$tmp/$m/trace.dat" "$tmp/$m/formats" "$tmp/$m/guest.json" "$tmp/$m/cpuinfo" \
			"$tmp/$m/kernel" "$d/"
		chmod -R u+w,go+r "$d"
		echo "$d: $(cat "$d/guest.json")"
	done
	exit 0
fi
[ -f "$img/vmlinux-smt" ] || { echo "no patched kernel: $(cat "$img/smt-refused.txt")" >&2; exit 1; }
q10=$("$top/scripts/qemu10.sh")
cp "$top/tests/power8/smt.sh" "$tmp/in/run.sh"
cp "$top/tests/power8/lib.sh" "$top/build-ppc64el/topoadvisor" "$tmp/in/"
echo "$n" >"$tmp/in/seconds"
modes="spin-idle spin-spin spin-hcall"
for m in $modes; do echo "$m ${m%-*} ${m#*-}"; done >"$tmp/in/modes"
for kernel in smt stock; do
	"$top/scripts/power8-host.sh" boot --machine powernv8 --qemu "$q10" \
		--smp 2,cores=1,threads=2 --kernel $kernel --timeout 300 "$tmp/in" "$tmp/$kernel"
	o=$tmp/$kernel
	[ "$(cat "$o/rc")" = 0 ] || { cat "$o/run.log"; exit 1; }
	d=$top/tests/fixtures/real/power8-smt
	[ $kernel = stock ] && d=$d-stock
	rm -rf "$d"
	mkdir -p "$d"
	cp -r "$o/formats" "$o/facts.txt" "$d/"
	for m in $modes; do
		cp "$o/$m.dat" "$d/$m.dat"
		cp "$o/$m.live" "$d/$m.live"
		python3 "$top/tests/power8/windows.py" "$o/$m.dat" >"$d/$m.windows.json"
		echo "$d/$m: $(head -n 1 "$d/$m.live")"
		echo "    $(cat "$d/$m.windows.json")"
	done
	chmod -R u+w,go+r "$d"
done
