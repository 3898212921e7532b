#!/bin/sh
# pseries guests with more than one thread per core, through libvirt, with
# a private QEMU 10 (scripts/qemu10.sh: bookworm-backports, extracted, run
# through a wrapper that sets its module directory and firmware path): the
# system's QEMU 7.2 refuses threads > 1 on pseries under TCG ("TCG cannot
# support more than 1 thread/core").  The ppc64 test guest image
# (scripts/guest-image.sh --arch ppc64) boots as 1x1x2 and 1x1x4 from a
# domain template whose <emulator> is the wrapper; tests/helpers/guest-e2e
# checks from inside that the guest sees those threads (thread siblings),
# that the agent runs and that the vCPUs ran, and destroys the guests.
# Skips when that QEMU or the image cannot be had (offline).
set -u
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
helper=$TA_BUILD/tests/helpers/guest-e2e
[ "$(id -u)" -eq 0 ] || skip "needs root for qemu:///system"
[ "$(uname -m)" = x86_64 ] || skip "the private QEMU is fetched for x86_64 hosts"
[ -x "$helper" ] || fail "missing $helper (make units)"
for b in /usr/sbin/libvirtd /usr/sbin/virtlogd; do
	[ -x "$b" ] || skip "$b not installed (scripts/deps.sh check)"
done
t0=$(date +%s)
qemu=$("$TA_TOP/scripts/qemu10.sh" 2>"$tmp/qemu10.log") ||
	skip "no QEMU 10 from bookworm-backports: $(tail -n 1 "$tmp/qemu10.log")"
"$qemu" -version | head -n 1
image=$("$TA_TOP/scripts/guest-image.sh" --arch ppc64 2>"$tmp/image.log") ||
	skip "cannot build the ppc64 guest image: $(tail -n 1 "$tmp/image.log")"
echo "time: QEMU 10 and image at $(( $(date +%s) - t0 ))s"

# QEMU runs as libvirt-qemu: the template, console files and work folder
# must be readable by it.
work=$tmp/work
mkdir "$work"
chmod 0755 "$tmp" "$work"
cat >"$work/pseries.xml" <<XML
<domain type='qemu'>
  <name>placeholder</name>
  <memory unit='MiB'>1024</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='ppc64le' machine='pseries'>hvm</type>
    <kernel>$image/vmlinuz</kernel>
    <initrd>$image/initrd</initrd>
    <cmdline>console=hvc0 panic=-1 quiet</cmdline>
  </os>
  <clock offset='utc'/>
  <devices>
    <emulator>$qemu</emulator>
    <console type='file'><source path='$work/console.log'/><target type='serial'/></console>
    <memballoon model='none'/>
  </devices>
</domain>
XML

pid=""
cleanup() {
	for d in $(ta_e2e_domains $pid); do
		virsh -q -c qemu:///system destroy "$d" >/dev/null 2>&1
	done
	"$TA_TOP/scripts/libvirtd-stop.sh" --user $$
	rm -rf "$tmp"
}
trap cleanup EXIT
"$TA_TOP/scripts/libvirtd-start.sh" --user $$ || fail "libvirtd did not start"

"$helper" --ppc64 --template "$work/pseries.xml" "$image" "$work" 1x1x2:none 1x1x4:none &
pid=$!
wait $!
rc=$?
echo "time: both guests at $(( $(date +%s) - t0 ))s"
[ $rc -eq 0 ] || { tail -n 30 "$work/console.log" 2>/dev/null; fail "guest-e2e failed"; }
left=$(ta_e2e_domains $pid)
[ -z "$left" ] || fail "domain(s) left behind: $left"
pass
