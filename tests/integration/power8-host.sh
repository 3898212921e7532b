#!/bin/sh
# topoadvisor on a real POWER8 KVM-HV kernel: Debian's ppc64el kernel under
# QEMU's powernv8 (scripts/power8-host.sh), with a ppc64el topoadvisor and
# the ppc64le KVM test guest cross-built here (make cross-ppc64el).  Inside,
# tests/power8/run.sh runs probe, a live trace beside trace-cmd, writes to
# the real knobs, a host-runner sweep and a killed controller followed by
# restore-host; this script judges what comes back:
#   - probe --json agrees with what the kernel says (POWER8,
#     subcores_per_core, every kvm_hv parameter, /dev/kvm usable, events);
#   - trace --json -- kvmppc-guest N counted exactly what trace-cmd recorded
#     at the same time (read here by exits), and N SYSCALL / PAPR_HCALL exits;
#   - the sweep over kvm_hv.dynamic_mt_modes ran every point with the knob
#     at its configuration's value, journalled it and put it back;
#   - after a controller was killed with a knob applied, restore-host put
#     the kernel's value back;
# then a powernv9 boot: probe sees no subcores_per_core and the live trace
# calls gang exits not applicable, with the exits still counted.
# Skips (77) where the emulated host cannot be had: not root (the image
# cache), no qemu-system-ppc64 or skiboot, no cross compiler, no access to
# Debian's archive for the ppc64el packages.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
. "$TA_TOP/tests/power8/host-lib.sh"
power8_setup

N=200
mkdir "$tmp/in"
cp "$TA_TOP/tests/power8/run.sh" "$tmp/in/run.sh"
cp "$TA_TOP/tests/power8/lib.sh" "$tmp/in/"
cp "$xb/topoadvisor" "$xb/tests/kvmppc-guest" "$tmp/in/"
echo $N >"$tmp/in/hcalls"
boot --machine powernv8 --timeout 400 "$tmp/in" "$tmp/p8" ||
	fail "the POWER8 host did not come back"
o=$tmp/p8
sed 's/^/    p8| /' "$o/run.log"
stamp "powernv8 boot and run"
[ "$(cat "$o/rc")" = 0 ] || fail "run.sh exited $(cat "$o/rc")"
[ -s "$o/modules.log" ] && fail "insmod kvm/kvm-hv: $(cat "$o/modules.log")"

# exits reads trace-cmd's file here, on x86.
"$TOPOADVISOR" --json exits "$o/rec.dat" >"$o/rec.json" 2>"$tmp/err" ||
	fail "exits on the POWER8 recording: $(cat "$tmp/err")"

python3 - "$o" "$N" <<'PY' || fail "POWER8 checks (above)"
import json, os, sys
o, n = sys.argv[1], int(sys.argv[2])
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
facts = {}
params = {}
for line in open(os.path.join(o, "facts.txt")):
    k, _, v = line.rstrip("\n").partition(" ")
    if k == "kvm_hv":
        name, _, val = v.partition(" ")
        params[name] = val
    else:
        facts[k] = v

probe = json.load(open(os.path.join(o, "probe.json")))
want(probe["arch"] == "ppc64le", f"probe arch {probe['arch']}")
want(probe["cpu_model"] == facts["cpu"] and "POWER8" in facts["cpu"],
     f"probe cpu_model {probe['cpu_model']!r}, kernel {facts['cpu']!r}")
want(probe["subcores_per_core"] == facts["subcores_per_core"],
     f"probe subcores_per_core {probe['subcores_per_core']}, kernel {facts['subcores_per_core']}")
want(probe["kvm_hv_parameters"] == params,
     f"probe kvm_hv parameters {probe['kvm_hv_parameters']}, kernel {params}")
want(probe["online"] == facts["online"], f"probe online {probe['online']}")
want(probe["kvm_device"] is True and facts.get("dev_kvm") == "yes", "no /dev/kvm")
want(probe["kvm_usable"] is True, f"KVM not usable: {probe['kvm_reason']}")
want("kvm_hv" in probe["kvm_reason"], f"kvm_reason {probe['kvm_reason']}")
want(probe["events_kvm_hv"] is True, "events_kvm_hv")

# Live: the program's own line, then trace's JSON.
text = open(os.path.join(o, "live.out")).read()
first, _, rest = text.partition("\n")
prog = json.loads(first)
live = json.loads(rest)
rec = json.load(open(os.path.join(o, "rec.json")))
want(prog["hcalls"] == n, f"the program made {prog['hcalls']} hypercalls, asked {n}")
want(live["applicable"] is True, "live: gang exits not applicable on POWER8")
want(live["lost_events"] == 0 and rec["lost_events"] == 0, "lost events")
keys = ("tgid", "comm", "gang_exits", "core_runs", "bailouts", "guest_exits", "cedes")
lp = [{k: p[k] for k in keys} for p in live["processes"]]
rp = [{k: p[k] for k in keys} for p in rec["processes"]]
want(lp == rp, f"processes: live {lp}, trace-cmd {rp}")
want([p["tgid"] for p in lp] == [prog["pid"]], f"live processes {lp}, program pid {prog['pid']}")
red = lambda x: sorted((r["source"], r["reason"], r["count"]) for r in x["exit_reasons"])
want(red(live) == red(rec), f"exit reasons: live {red(live)}, trace-cmd {red(rec)}")
# Counts and timed pairs are the same events'; the handling times are
# each instance's own timestamps of them (one ring buffer each), so they
# agree only roughly: both timed, nothing more is asked of their values.
untimed = lambda rows: [{k: v for k, v in r.items() if not k.startswith("time_") or k == "time_pairs"}
                        for r in rows]
lv, rv = untimed(live["exit_reasons_by_vcpu"]), untimed(rec["exit_reasons_by_vcpu"])
want(lv == rv, "per-vCPU reasons differ: " + "; ".join(
         f"live {a} / trace-cmd {b}" for a, b in zip(lv, rv) if a != b)
     + f" ({len(lv)} / {len(rv)} rows)")
for side, rows in (("live", live["exit_reasons_by_vcpu"]), ("trace-cmd", rec["exit_reasons_by_vcpu"])):
    for r in rows:
        if r["source"] == "powerpc":
            want(r["time_pairs"] > 0 and r["time_total_s"] > 0,
                 f"{side}: {r['name']} of vCPU {r['vcpu']} not timed: {r}")
byname = {(r["source"], r["name"]): r["count"] for r in live["exit_reasons"]}
want(byname.get(("powerpc", "SYSCALL")) == n, f"SYSCALL {byname.get(('powerpc', 'SYSCALL'))}")
want(byname.get(("userspace", "PAPR_HCALL")) == n, f"PAPR_HCALL {byname.get(('userspace', 'PAPR_HCALL'))}")
print(f"live = trace-cmd: {lp[0] if lp else None}; reasons {red(live)}")

for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# What the kernel answered (printed for the record): subcores_per_core takes
# 1 and refuses what the knob table refuses too.
sed 's/^/    answer| /' "$o/answers.txt"
orig_mt=$(sed -n 's/^kvm_hv dynamic_mt_modes //p' "$o/facts.txt")
orig_sub=$(sed -n 's/^subcores_per_core //p' "$o/facts.txt")
for v in 0 3 8; do
	grep -q "^subcores_per_core $v: error.*Invalid argument -> $orig_sub " "$o/answers.txt" ||
		fail "subcores_per_core $v should be refused with EINVAL"
	# ... and so does the knob table, before anything is written.
	printf 'name: x\nguest: {runner: host}\ntopology: [1x1x1]\nhost: {subcores_per_core: [%s]}\nbenchmark: {kind: command, argv: [true], parse: "(?<x>[0-9]+)", metric: x}\n' \
		"$v" >"$tmp/sub.yaml"
	"$TOPOADVISOR" plan "$tmp/sub.yaml" >/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] && grep -q "expected 1, 2 or 4, got '$v'" "$tmp/err" ||
		fail "the knob table should refuse subcores_per_core $v: $(cat "$tmp/err")"
done
grep -q "^subcores_per_core 1: ok -> 1 " "$o/answers.txt" || fail "subcores_per_core 1 not taken"
grep -q "^dynamic_mt_modes 0: ok -> 0$" "$o/answers.txt" || fail "dynamic_mt_modes 0 not taken"

# The sweep: 2 values x 2 repetitions, each run with its configuration's
# value in the kernel, N hypercalls each, the knob journalled and restored.
q() { sqlite3 "$o/sweep.db" "$1"; }
[ "$(sqlite3 :memory: "SELECT readfile('$o/sweep.json') ->> '\$.ok'")" = 4 ] ||
	fail "sweep: $(cat "$o/sweep.json") $(cat "$o/sweep.err")"
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'hcalls' AND value = $N")" = 4 ] ||
	fail "sweep metrics: $(q "SELECT run_id, name, value FROM metrics")"
[ "$(q "SELECT COUNT(DISTINCT dynamic_mt_modes) FROM configurations")" = 2 ] ||
	fail "sweep configurations"
bad=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	 WHERE r.host_state ->> '\$.knobs.\"kvm_hv.dynamic_mt_modes\"' <> CAST(c.dynamic_mt_modes AS TEXT)")
[ "$bad" = 0 ] || fail "$bad runs saw another dynamic_mt_modes than their configuration's"
[ "$(q "SELECT original_value, restored_at IS NOT NULL FROM host_journal
	WHERE knob = 'kvm_hv.dynamic_mt_modes'")" = "$orig_mt|1" ] ||
	fail "journal: $(q "SELECT * FROM host_journal")"
grep -qx "dynamic_mt_modes $orig_mt" "$o/after.txt" && grep -qx "subcores_per_core $orig_sub" "$o/after.txt" ||
	fail "knobs after the sweep: $(cat "$o/after.txt")"
# The killed controller left 2 in the kernel; restore-host put it back.
grep -qx "during 2" "$o/crash.txt" && grep -qx "after $orig_mt" "$o/crash.txt" ||
	fail "crash and restore-host: $(cat "$o/crash.txt" "$o/restore.out")"
[ "$(sqlite3 "$o/crash.db" "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] ||
	fail "restore-host left the journal open"
stamp "POWER8 checks"

# POWER9: the same probe and live trace; no split-core, no run_core.
echo probe-trace >"$tmp/in/mode"
echo 50 >"$tmp/in/hcalls"
boot --machine powernv9 --timeout 300 "$tmp/in" "$tmp/p9" ||
	fail "the POWER9 host did not come back"
sed 's/^/    p9| /' "$tmp/p9/run.log"
stamp "powernv9 boot and run"
python3 - "$tmp/p9" <<'PY' || fail "POWER9 checks (above)"
import json, os, sys
o = sys.argv[1]
bad = []
probe = json.load(open(os.path.join(o, "probe.json")))
if "POWER9" not in probe["cpu_model"]: bad.append(f"cpu {probe['cpu_model']}")
if probe["subcores_per_core"] is not None: bad.append("POWER9 has no subcores_per_core")
if probe["kvm_usable"] is not True: bad.append(f"KVM not usable: {probe['kvm_reason']}")
text = open(os.path.join(o, "live.out")).read()
first, _, rest = text.partition("\n")
prog, live = json.loads(first), json.loads(rest)
if live["applicable"] is not False: bad.append("POWER9 gang exits must be not applicable")
if any(p["gang_exits"] is not None for p in live["processes"]): bad.append("gang exits must be null")
by = {(r["source"], r["name"]): r["count"] for r in live["exit_reasons"]}
if by.get(("powerpc", "SYSCALL")) != prog["hcalls"]: bad.append(f"SYSCALL {by.get(('powerpc', 'SYSCALL'))}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
pass
