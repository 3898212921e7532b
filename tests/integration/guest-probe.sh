#!/bin/sh
# `topoadvisor probe` tells the truth about this host: its answers are
# cross-checked against uname, sysfs and /sys/module, in text and --json,
# and a URI that answers (test:///default) is told from one that does not.
set -u
bin=${TOPOADVISOR:?run via scripts/run-tests.sh}
fail=0
no() { echo "FAIL: $*"; fail=1; }

json=$("$bin" probe --json --uri test:///default) || no "probe --json exited $?"
field() { # key -> the value as printed in the pretty JSON
	printf '%s\n' "$json" | sed -n "s/^  \"$1\": \(.*\),\{0,1\}$/\1/p" | sed 's/,$//' | head -n 1
}
[ "$(field arch)" = "\"$(uname -m)\"" ] || no "arch $(field arch), uname says $(uname -m)"
[ "$(field online)" = "\"$(cat /sys/devices/system/cpu/online)\"" ] ||
	no "online $(field online) vs $(cat /sys/devices/system/cpu/online)"
n=$(ls -d /sys/devices/system/cpu/cpu[0-9]*/topology 2>/dev/null | wc -l)
[ "$(field online_cpus)" = "$n" ] || no "online_cpus $(field online_cpus), sysfs has $n"
if [ -f /sys/devices/system/cpu/smt/control ]; then
	[ "$(field smt_control)" = "\"$(cat /sys/devices/system/cpu/smt/control)\"" ] ||
		no "smt_control $(field smt_control)"
else
	[ "$(field smt_control)" = null ] || no "smt_control should be null"
fi
if [ -d /sys/module/kvm_pvm ] && [ ! -d /sys/module/kvm_intel ] && [ ! -d /sys/module/kvm_amd ]; then
	[ "$(field kvm_usable)" = false ] || no "PVM host must not be called KVM-usable"
fi
[ -e /dev/kvm ] || [ "$(field kvm_usable)" = false ] || no "no /dev/kvm but KVM usable"
if [ -d /sys/kernel/tracing/events/kvm ]; then
	[ "$(field events_kvm)" = true ] || no "events_kvm should be true"
fi
printf '%s\n' "$json" | grep -q '"answers": true' || no "test:///default should answer"
printf '%s\n' "$json" | grep -q '"hypervisor": "TEST"' || no "test driver not named"

text=$("$bin" probe --uri "qemu:///system?socket=/nonexistent/libvirt-sock") || no "probe exited $?"
printf '%s\n' "$text" | grep -q 'does not answer' || no "bad URI reported as answering"
printf '%s\n' "$text" | grep -q "^arch  *$(uname -m)$" || no "text lacks the arch line"

"$bin" probe extra >/dev/null 2>&1
[ $? -eq 2 ] || no "an extra argument must be a usage error (2)"

[ $fail -eq 0 ] && echo "probe: all checks passed"
exit $fail
