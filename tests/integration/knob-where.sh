#!/bin/sh
# Host knobs know the CPUs and kernels they exist on, judged by the host
# --root names: its knob files and, where present, its own proc/cpuinfo and
# proc/sys/kernel/osrelease.  A fake root without those two files plans as
# before (the knob files decide); a POWER9 root on Linux 6.1 refuses
# kvm_hv.indep_threads_mode (removed in 5.14) in plan and says why in probe;
# the same root on 5.10 takes it; a POWER8 root refuses it as POWER9-only
# and takes the split-core knobs.  The cpuinfo files are the ones recorded
# on QEMU's powernv8/powernv9 machines (tests/fixtures/real/).
. "$TA_TOP/tests/lib.sh"
ta_tmpdir

fx="$TA_TOP/tests/fixtures/real"
[ -r "$fx/power9/cpuinfo" ] && [ -r "$fx/power8/cpuinfo" ] || fail "fixture cpuinfo missing"
root="$tmp/root"
par="$root/sys/module/kvm_hv/parameters"
mkdir -p "$par" || fail "mkdir"
echo Y >"$par/indep_threads_mode"
echo N >"$par/one_vm_per_core"
echo 6 >"$par/dynamic_mt_modes"

cat >"$tmp/indep.yaml" <<'YAML'
name: indep
topology: [1x2x1]
host: {kvm_hv.indep_threads_mode: [Y, N]}
benchmark: {kind: stress-ng}
YAML
cat >"$tmp/mt.yaml" <<'YAML'
name: mt
topology: [1x2x1]
host: {kvm_hv.dynamic_mt_modes: [0, 6]}
benchmark: {kind: stress-ng}
YAML

# plan_refuses YAML WANT: plan --root exits 2 naming the key and the reason.
plan_refuses() {
	"$TOPOADVISOR" plan --root "$root" "$1" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "plan $1 should exit 2, got $rc: $(cat "$tmp/err")"
	grep -qF "$2" "$tmp/err" || fail "plan $1: want '$2' in: $(cat "$tmp/err")"
}
# probe_says KNOB WANT: probe --root prints KNOB's line with WANT.
probe_says() {
	"$TOPOADVISOR" probe --root "$root" >"$tmp/probe" 2>&1 || fail "probe --root: $(cat "$tmp/probe")"
	line=$(grep "^  $1 " "$tmp/probe") || fail "probe has no line for $1: $(cat "$tmp/probe")"
	case $line in
	*"$2") ;;
	*) fail "probe: want '$1 ... $2', got '$line'" ;;
	esac
}

# No facts: the knob files decide, exactly as before.
"$TOPOADVISOR" plan --root "$root" "$tmp/indep.yaml" >/dev/null 2>"$tmp/err" ||
	fail "no cpuinfo/osrelease: plan should take the knob: $(cat "$tmp/err")"
"$TOPOADVISOR" plan --root "$root" "$tmp/mt.yaml" >/dev/null 2>"$tmp/err" ||
	fail "no cpuinfo/osrelease: plan should take dynamic_mt_modes: $(cat "$tmp/err")"
probe_says kvm_hv.indep_threads_mode " Y"

# POWER9 on Linux 6.1: the file is there, the kernel has no such mode.
mkdir -p "$root/proc/sys/kernel" || fail "mkdir"
cp "$fx/power9/cpuinfo" "$root/proc/cpuinfo" || fail "cp"
echo 6.1.0 >"$root/proc/sys/kernel/osrelease"
plan_refuses "$tmp/indep.yaml" \
	"indep.yaml:3:8: host.kvm_hv.indep_threads_mode: this host cannot sweep this knob: kvm_hv.indep_threads_mode: not on this host: removed in Linux 5.14 (this kernel is 6.1)"
plan_refuses "$tmp/mt.yaml" "not on this host: POWER7 or POWER8 only (this CPU is POWER9)"
probe_says kvm_hv.indep_threads_mode "not on this host: removed in Linux 5.14 (this kernel is 6.1)"
probe_says kvm_hv.one_vm_per_core "not on this host: on POWER9 removed in Linux 5.14 (this kernel is 6.1)"
"$TOPOADVISOR" --json probe --root "$root" >"$tmp/probe.json" || fail "probe --json"
python3 - "$tmp/probe.json" <<'PY' || fail "probe --json host_knobs"
import json, sys
k = json.load(open(sys.argv[1]))["host_knobs"]
assert k["kvm_hv.indep_threads_mode"] == {
    "available": False, "reason": "removed in Linux 5.14 (this kernel is 6.1)"}, k
assert len(k) == 10, k
PY

# The same POWER9 on 5.10 has it.
echo 5.10.0-26-powerpc64le >"$root/proc/sys/kernel/osrelease"
"$TOPOADVISOR" plan --root "$root" "$tmp/indep.yaml" >/dev/null 2>"$tmp/err" ||
	fail "POWER9 5.10: plan should take the knob: $(cat "$tmp/err")"
probe_says kvm_hv.indep_threads_mode " Y"

# POWER8 on 6.1: no independent-threads mode (POWER9 only), dynamic micro-threading yes.
cp "$fx/power8/cpuinfo" "$root/proc/cpuinfo" || fail "cp"
echo 6.1.0 >"$root/proc/sys/kernel/osrelease"
plan_refuses "$tmp/indep.yaml" "not on this host: POWER9 only (this CPU is POWER8)"
"$TOPOADVISOR" plan --root "$root" "$tmp/mt.yaml" >/dev/null 2>"$tmp/err" ||
	fail "POWER8: plan should take dynamic_mt_modes: $(cat "$tmp/err")"
probe_says kvm_hv.dynamic_mt_modes " 6"
probe_says kvm_hv.one_vm_per_core " N"
exit 0
