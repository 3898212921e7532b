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
	# A program still running 20 s after its SECS has a vCPU thread stuck
	# in the kernel: say where (its threads' kernel stacks, the blocked
	# tasks) while the host can still write.
	(
		sleep $((secs + 20))
		{
			echo "== $name: still running after $((secs + 20)) s"
			for d in /proc/[0-9]*; do
				[ "$(cat "$d/comm" 2>/dev/null)" = kvmppc-guest ] || continue
				for t in "$d"/task/*; do
					echo "-- task ${t##*/} $(grep '^State' "$t/status") wchan $(cat "$t/wchan")"
					cat "$t/stack"
				done
			done
			echo w >/proc/sysrq-trigger
			dmesg | tail -n 60
		} >"/out/$name.stuck" 2>&1
		cat "/out/$name.stuck"
	) &
	watchdog=$!
	# shellcheck disable=SC2086
	record_beside "/out/$name.dat" "$name.live" "$name.err" \
		/in/topoadvisor trace --json -- /in/kvmppc-guest -s "$secs" $behaviours
	echo "trace exit $?"
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	[ -s "/out/$name.stuck" ] || rm -f "/out/$name.stuck"
	head -n 1 "$name.live"
	tail -n 3 "$name.err"
done </in/modes

mkdir -p formats
for f in /sys/kernel/tracing/events/kvm_hv/*/format /sys/kernel/tracing/events/kvm/kvm_userspace_exit/format; do
	e=${f%/format}
	cp "$f" "formats/${e##*/}.format"
done

# The host kernel's log: KVM says there when it cannot grab a secondary
# thread ("couldn't grab cpu") or one does not come back ("seems to be stuck").
dmesg >dmesg.txt 2>&1
