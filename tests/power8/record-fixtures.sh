#!/bin/sh
# Records the committed real-kernel fixtures in tests/fixtures/real/: for
# POWER8 (-M powernv8: kvmppc_run_core fires) and POWER9 (-M powernv9: it
# never does) one trace-cmd recording of kvmppc-guest making HCALLS
# hypercalls on the real kvm_hv tracepoints, the kernel's event format
# files, and what the program and the kernel said (tests/power8/record.sh
# inside the emulated host).  Not part of `make check`: run it by hand
# when the fixtures should be recorded again, then commit the result.
# Usage: tests/power8/record-fixtures.sh [HCALLS]   (default 20)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-20}
make -s -C "$top" cross-ppc64el
guest=$top/build-ppc64el/tests/kvmppc-guest
"$top/scripts/power8-host.sh" image "$top/build-ppc64el/topoadvisor" >/dev/null
tmp=$(mktemp -d /tmp/ta-fixtures.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir "$tmp/in"
cp "$top/tests/power8/record.sh" "$tmp/in/run.sh"
cp "$guest" "$tmp/in/"
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
