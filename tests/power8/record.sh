#!/bin/sh
# Runs inside the emulated POWER host as /in/run.sh for
# tests/power8/record-fixtures.sh: one trace-cmd recording of kvmppc-guest
# (HCALLS hypercalls, from /in/hcalls) on the real kvm_hv tracepoints, the
# event format files of that kernel, and what the program and the kernel
# said.  /proc/kallsyms is hidden from trace-cmd (bind-mounted over with an
# empty file): it would be most of the file, and nothing here needs it.
N=$(cat /in/hcalls 2>/dev/null || echo 20)
cat /out/modules.log
: >/tmp/empty
mount --bind /tmp/empty /proc/kallsyms
trace-cmd record -e kvm_hv -e kvm:kvm_userspace_exit -o /out/trace.dat \
	/in/kvmppc-guest "$N" >/out/guest.json 2>/out/record.log
echo "record exit $?"
tail -n 3 /out/record.log
mkdir -p /out/formats
for f in /sys/kernel/tracing/events/kvm_hv/*/format /sys/kernel/tracing/events/kvm/kvm_userspace_exit/format; do
	e=${f%/format}
	cp "$f" "/out/formats/${e##*/}.format"
done
grep -E '^(cpu|revision|platform|model)' /proc/cpuinfo | sort -u >/out/cpuinfo
uname -r >/out/kernel
