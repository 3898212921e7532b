#!/bin/sh
# End to end with real guests under TCG: builds (or reuses) the test guest
# image, starts libvirtd if it is not running (and stops it again at the
# end, also on failure, unless another test still uses it), then tests/helpers/guest-e2e boots the image in four
# shapes - 1x2x1, 1x1x2, 2x1x1 and 1x2x2 (4 vCPUs, threads=2) with compact,
# spread and explicit pinning - checks what the guest sees, runs stress-ng
# through the agent, verifies the pinning through the API, and checks that
# unbootable guests fail clearly and leave no domain.  Then the same for a
# ppc64 pseries guest in two shapes, when qemu-system-ppc64 is there.
set -u

. "$TA_TOP/tests/lib.sh"
top=$TA_TOP
build=${TA_BUILD:-$top/build}
helper=$build/tests/helpers/guest-e2e

[ "$(id -u)" -eq 0 ] || skip "needs root for qemu:///system"
[ "$(uname -m)" = x86_64 ] || skip "the test image is x86_64 only"
[ -x "$helper" ] || { echo "missing $helper (make units)"; exit 1; }
for b in /usr/sbin/libvirtd /usr/sbin/virtlogd /usr/bin/qemu-system-x86_64; do
	[ -x "$b" ] || skip "$b not installed (scripts/deps.sh check)"
done

image=$("$top/scripts/guest-image.sh") || skip "cannot build the guest image (offline?)"

work=$(mktemp -d /tmp/topoadvisor-e2e.XXXXXX)
# QEMU runs as libvirt-qemu and writes the console logs here.
chmod 0755 "$work"
pids=""
# shellcheck disable=SC2086
ours() { ta_e2e_domains $pids; }
run_helper() {
	"$helper" "$@" &
	pids="$pids $!"
	wait $!
}
cleanup() {
	# Our domains, should the helper have died half-way.
	for d in $(ours); do
		virsh -q -c qemu:///system destroy "$d" >/dev/null 2>&1
	done
	# Stops libvirtd unless it was running before us or another test uses it.
	"$top/scripts/libvirtd-stop.sh" --user $$
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$top/scripts/libvirtd-start.sh" --user $$ || { echo "libvirtd did not start"; exit 1; }

run_helper "$image" "$work" 1x2x1:compact 1x1x2:spread 2x1x1:1/0 1x2x2:0/0/1/1
rc=$?

# The pseries guest (real POWER domain XML under qemu-system-ppc64 TCG).
# QEMU 7.2's TCG refuses more than one thread per core on pseries ("TCG
# cannot support more than 1 thread/core"), so only threads=1 shapes boot.
if [ ! -x /usr/bin/qemu-system-ppc64 ]; then
	echo "note: ppc64 part skipped: qemu-system-ppc64 not installed"
elif ! ppc=$("$top/scripts/guest-image.sh" --arch ppc64); then
	echo "note: ppc64 part skipped: cannot build the ppc64 image"
else
	run_helper --ppc64 "$ppc" "$work" 1x2x1:compact 2x1x1:spread || rc=1
fi

left=$(ours)
if [ -n "$left" ]; then
	echo "FAIL: domain(s) left behind: $left"
	rc=1
fi
exit $rc
