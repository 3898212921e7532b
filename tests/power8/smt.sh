#!/bin/sh
# Runs inside the emulated POWER8 host booted with threads per core > 1 (as
# /in/run.sh, in /out) for tests/integration/power8-smt.sh and
# tests/power8/record-fixtures.sh: vcores of two vCPUs on one core.
# For each line "NAME BEHAVIOUR..." of /in/modes:
#   NAME.live  `topoadvisor trace --json -- kvmppc-guest -s SECS BEHAVIOUR...`:
#              the program's JSON line (pid, vCPU threads, counters), then
#              trace's JSON (the live count)
#   NAME.dat   trace-cmd's recording of the same events, made beside it
#   NAME.err   their stderr
# SECS is /in/seconds.  Also facts.txt (the kernel, its threads, what was
# online) and formats/ (the kernel's event format files).  /proc/kallsyms
# is hidden from trace-cmd (it would be most of each file).
. /in/lib.sh
secs=$(cat /in/seconds)
cat /out/modules.log

{
	echo "kernel $(uname -r)"
	echo "cpus $(ls -d /sys/devices/system/cpu/cpu[0-9]* | wc -l)"
	echo "online_before $(cat /sys/devices/system/cpu/online)"
	# KVM HV on POWER8 runs a vcore's threads on secondary hardware threads
	# that the host has offline; the test boots one core, so all but cpu0.
	for c in /sys/devices/system/cpu/cpu[1-9]*/online; do echo 0 >"$c"; done
	echo "online $(cat /sys/devices/system/cpu/online)"
	for f in /sys/module/kvm_hv/parameters/*; do echo "kvm_hv ${f##*/} $(cat "$f")"; done
} >facts.txt 2>&1
cat facts.txt

: >/tmp/empty
mount --bind /tmp/empty /proc/kallsyms
while read -r name behaviours; do
	[ -n "$name" ] || continue
	echo "== $name: $behaviours"
	# shellcheck disable=SC2086
	record_beside "/out/$name.dat" "$name.live" "$name.err" \
		/in/topoadvisor trace --json -- /in/kvmppc-guest -s "$secs" $behaviours
	echo "trace exit $?"
	head -n 1 "$name.live"
	tail -n 3 "$name.err"
done </in/modes

mkdir -p formats
for f in /sys/kernel/tracing/events/kvm_hv/*/format /sys/kernel/tracing/events/kvm/kvm_userspace_exit/format; do
	e=${f%/format}
	cp "$f" "formats/${e##*/}.format"
done
