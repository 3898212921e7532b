#!/bin/sh
# Runs inside the emulated POWER8 host (scripts/power8-host.sh boot), as its
# /in/run.sh, in /out: everything it writes there comes back to
# tests/integration/power8-host.sh, which judges it on x86.  Each step
# writes its own files and goes on when another fails; the x86 side says
# which were wrong.
#   probe.json            topoadvisor probe --json
#   live.json, rec.dat    trace --json -- kvmppc-guest N, with trace-cmd
#                         recording the same kvm_hv events at the same time
#   answers.txt           what the kernel answered to each write of
#                         dynamic_mt_modes and subcores_per_core
#   sweep.db, sweep.json  a `run` with guest.runner: host sweeping those knobs
#   after.txt             the knobs' values after the sweep
#   crash.txt             dynamic_mt_modes while a controller that was
#                         killed left it applied, and after restore-host
#   facts.txt             what the kernel itself says (for probe.json)
# With /in/mode saying "probe-trace" (the POWER9 boot) only the first two.
. /in/lib.sh
N=$(cat /in/hcalls 2>/dev/null || echo 200)
mode=$(cat /in/mode 2>/dev/null || echo full)
ta=/in/topoadvisor
export TOPOADVISOR_LOCK=/tmp/ta.lock
cat /out/modules.log

echo "== facts"
{
	echo "cpu $(sed -n 's/^cpu[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "subcores_per_core $(cat /sys/devices/system/cpu/subcores_per_core 2>/dev/null || echo absent)"
	for f in /sys/module/kvm_hv/parameters/*; do echo "kvm_hv ${f##*/} $(cat "$f")"; done
	[ -c /dev/kvm ] && echo "dev_kvm yes"
	[ -d /sys/kernel/tracing/events/kvm_hv ] && echo "events_kvm_hv yes"
	echo "online $(cat /sys/devices/system/cpu/online)"
} >facts.txt
cat facts.txt

echo "== probe"
$ta probe --json --uri test:///default >probe.json 2>probe.err; echo "probe exit $?"

echo "== live trace with trace-cmd beside it"
# The program's own line comes first on stdout, then trace's JSON.
record_beside /out/rec.dat live.out live.err $ta trace --json -- kvmppc-guest "$N"
echo "trace exit $?"
[ "$mode" = full ] || exit 0

echo "== knobs: the kernel's answers"
par=/sys/module/kvm_hv/parameters
sub=/sys/devices/system/cpu/subcores_per_core
orig_mt=$(cat $par/dynamic_mt_modes)
orig_sub=$(cat $sub)
{
	for v in 0 1 2 3 4 5 6 7 8 -1; do
		if echo "$v" >$par/dynamic_mt_modes 2>/tmp/w; then r=ok; else r="error $(cat /tmp/w)"; fi
		echo "dynamic_mt_modes $v: $r -> $(cat $par/dynamic_mt_modes)"
	done
	echo "$orig_mt" >$par/dynamic_mt_modes
	# Only values that return: under TCG a split (2 or 4) never completes,
	# it waits for secondary threads that QEMU 7.2's powernv8 (threads=1)
	# does not have, and QEMU 10's threads=8 did not finish it either.
	for v in 3 8 0 1; do
		if echo "$v" >$sub 2>/tmp/w; then r=ok; else r="error $(cat /tmp/w)"; fi
		echo "subcores_per_core $v: $r -> $(cat $sub) online=$(cat /sys/devices/system/cpu/online)"
	done
	echo "$orig_sub" >$sub
} >answers.txt 2>&1
cat answers.txt
echo "restored: dynamic_mt_modes $(cat $par/dynamic_mt_modes) subcores_per_core $(cat $sub)"

echo "== sweep with the host runner"
sweep_subcores=${SWEEP_SUBCORES:-1}
cat >/tmp/sweep.yaml <<YAML
name: power8-host
guest: {runner: host}
topology: [1x1x1]
host:
  kvm_hv.dynamic_mt_modes: [0, 6]
  subcores_per_core: [$sweep_subcores]
noise: [none]
benchmark:
  kind: command
  argv: ["/in/kvmppc-guest", "$N"]
  parse: '"hcalls": (?<hcalls>[0-9]+)'
  metric: hcalls
repetitions: 2
seed: 1
YAML
$ta --db /out/sweep.db --json -q run /tmp/sweep.yaml >sweep.json 2>sweep.err; echo "run exit $?"
cat sweep.err | tail -n 5
echo "dynamic_mt_modes $(cat $par/dynamic_mt_modes)" >after.txt
echo "subcores_per_core $(cat $sub)" >>after.txt
cat after.txt

echo "== a killed controller, then restore-host"
cat >/tmp/crash.yaml <<'YAML'
name: power8-crash
guest: {runner: host}
topology: [1x1x1]
host:
  kvm_hv.dynamic_mt_modes: [2]
noise: [none]
benchmark:
  kind: command
  argv: ["/bin/sh", "-c", "kill -KILL $PPID; sleep 1"]
  parse: 'x (?<x>[0-9]+)'
  metric: x
repetitions: 1
YAML
$ta --db /out/crash.db -q run /tmp/crash.yaml >/dev/null 2>crash.err; echo "crashed run exit $?"
echo "during $(cat $par/dynamic_mt_modes)" >crash.txt
$ta --db /out/crash.db restore-host >restore.out 2>&1; echo "restore-host exit $?"
echo "after $(cat $par/dynamic_mt_modes)" >>crash.txt
cat crash.txt restore.out
