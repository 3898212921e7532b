#!/bin/sh
# Real ganged exits from a real POWER8 kernel whose vcores' secondary threads
# really run: Debian's ppc64el kernel, patched at image time where QEMU
# keeps per thread what POWER8 keeps per core (scripts/power8-smt-patch.py,
# docs/power-host.md), booted by QEMU 10's powernv8 with two threads per
# core.  Inside (tests/power8/smt.sh) kvmppc-guest runs one vcore of two
# vCPUs, each mode for 3 s, under `topoadvisor trace` with trace-cmd
# recording beside it: vCPU 0 spins, vCPU 1 is idle (H_CEDE), spins, or
# makes hypercalls to user space (the seed's setups 1a-1c).  Judged here:
#   - the patch: vmlinux-smt differs from Debian's vmlinux in exactly the
#     four words smt-patch.txt names; a kernel whose words differ, and a
#     file that is no ELF, are refused with the reason;
#   - per mode, topoadvisor's counts equal a second reading of trace-cmd's
#     file (tests/power8/windows.py over `trace-cmd report -R`): windows,
#     ganged exits by the rule, bail-outs; `exits` (offline) equals `trace`
#     (live); the seed's rule equals the per-vcore one (one vcore per VM);
#   - spin+idle: the idle vCPU 1 (on the secondary thread) ceded (ceded=1
#     exits: it executed guest code), and none of the windows where it had
#     ceded while vCPU 0 was busy is counted as ganged;
#   - spin+spin: vCPU 1's counter moved, windows with n_runnable = 2 and
#     both vCPUs in the guest exist and every such window is counted;
#     ganged exits are a larger share of the windows than with an idle
#     sibling;
#   - spin+hcall: vCPU 1 made hypercalls (SYSCALL exits of vCPU 1, each one
#     user-space exit; its counter agrees).
# Relations only: the counts swing by ±50 % with the load of this machine.
# Skips (77, with the reason) where the emulated host cannot be had (see
# tests/power8/host-lib.sh), where QEMU 10 cannot be had, or where the
# kernel does not take the patch.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
. "$TA_TOP/tests/power8/host-lib.sh"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (scripts/deps.sh)"
power8_setup
[ -f "$img/vmlinux-smt" ] ||
	skip "this kernel cannot be patched to run secondary threads: $(cat "$img/smt-refused.txt")"
q10=$("$TA_TOP/scripts/qemu10.sh" 2>"$tmp/qemu10.log") ||
	skip "no QEMU 10 (powernv8 with threads needs it): $(tail -n 1 "$tmp/qemu10.log")"

# The patch: four words, each what the table says, and nothing else.
python3 - "$img/vmlinux" "$img/vmlinux-smt" "$img/smt-patch.txt" <<'PY' || fail "the patched kernel (above)"
import re, struct, sys
stock, smt = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
rows = re.findall(r"^\| `([0-9a-f]{16})` \| `([0-9a-f]{8})` \| `([0-9a-f]{8})` \|",
                  open(sys.argv[3]).read(), re.M)
if len(rows) != 4 or len(stock) != len(smt):
    sys.exit(f"FAIL: {len(rows)} rows in smt-patch.txt, sizes {len(stock)} and {len(smt)}")
diff = [i for b in range(0, len(stock), 4096) if stock[b:b + 4096] != smt[b:b + 4096]
        for i in range(b, min(b + 4096, len(stock)), 4) if stock[i:i + 4] != smt[i:i + 4]]
got = sorted((struct.unpack_from("<I", stock, i)[0], struct.unpack_from("<I", smt, i)[0]) for i in diff)
want = sorted((int(o, 16), int(n, 16)) for _, o, n in rows)
if got != want:
    sys.exit(f"FAIL: words changed {[(hex(a), hex(b)) for a, b in got]}, the table says {rows}")
print(f"patch: {len(diff)} words, as smt-patch.txt says")
PY
patcher=$TA_TOP/scripts/power8-smt-patch.py
cp "$img/vmlinux" "$tmp/other"
# Another build: the first word smt-patch.txt changes is something else.
off=$(python3 - "$tmp/other" "$img/smt-patch.txt" <<'PY'
import re, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
addr = int(re.search(r"^\| `([0-9a-f]{16})`", open(sys.argv[2]).read(), re.M).group(1), 16)
shoff, = struct.unpack_from("<Q", data, 0x28)
entsize, num = struct.unpack_from("<HH", data, 0x3A)
for i in range(num):
    _, stype, _, saddr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * entsize)
    if stype == 1 and saddr <= addr < saddr + size:
        struct.pack_into("<I", data, off + addr - saddr, 0x60000000)
        open(sys.argv[1], "wb").write(data)
        print(off + addr - saddr)
PY
)
[ -n "$off" ] || fail "could not alter the copy of vmlinux"
python3 "$patcher" "$tmp/other" "$tmp/other-smt" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 3 ] && [ ! -e "$tmp/other-smt" ] && grep -q "cannot patch: kvmppc_hv_entry: the sequence .* occurs 0 times" "$tmp/err" ||
	fail "a kernel with other words at the site: exit, $(cat "$tmp/err")"
printf 'not an ELF file' >"$tmp/notelf"
python3 "$patcher" "$tmp/notelf" "$tmp/x" 2>"$tmp/err"
[ $? -eq 3 ] && grep -q "not a 64-bit little-endian ELF" "$tmp/err" || fail "a non-ELF: $(cat "$tmp/err")"
rm -f "$tmp/other"
stamp "patch checks"

mkdir "$tmp/in"
cp "$TA_TOP/tests/power8/smt.sh" "$tmp/in/run.sh"
cp "$TA_TOP/tests/power8/lib.sh" "$xb/topoadvisor" "$xb/tests/kvmppc-guest" "$tmp/in/"
echo 3 >"$tmp/in/seconds"
printf '%s\n' "spin-idle spin idle" "spin-spin spin spin" "spin-hcall spin hcall" >"$tmp/in/modes"
boot --machine powernv8 --qemu "$q10" --smp 2,cores=1,threads=2 --kernel smt --timeout 300 \
	"$tmp/in" "$tmp/p8" || fail "the POWER8 host did not come back"
o=$tmp/p8
sed 's/^/    p8| /' "$o/run.log"
stamp "powernv8 threads=2 boot and run"
[ "$(cat "$o/rc")" = 0 ] || fail "smt.sh exited $(cat "$o/rc")"
[ -s "$o/modules.log" ] && fail "insmod kvm/kvm-hv: $(cat "$o/modules.log")"
grep -qx "online 0" "$o/facts.txt" || fail "the secondary thread is still online: $(cat "$o/facts.txt")"

for m in spin-idle spin-spin spin-hcall; do
	for algo in vcore seed; do
		"$TOPOADVISOR" --json exits --algorithm $algo "$o/$m.dat" >"$o/$m.$algo.json" 2>"$tmp/err" ||
			fail "exits --algorithm $algo on $m: $(cat "$tmp/err")"
	done
	python3 "$TA_TOP/tests/power8/windows.py" "$o/$m.dat" >"$o/$m.windows.json" ||
		fail "trace-cmd report on $m"
done

python3 - "$o" <<'PY' || fail "SMT checks (above)"
import json, os, sys
o = sys.argv[1]
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
keys = ("gang_exits", "core_runs", "bailouts", "guest_exits", "cedes")
share = {}
for m in ("spin-idle", "spin-spin", "spin-hcall"):
    first, _, rest = open(os.path.join(o, m + ".live")).read().partition("\n")
    prog, live = json.loads(first), json.loads(rest)
    rec = json.load(open(os.path.join(o, m + ".vcore.json")))
    seed = json.load(open(os.path.join(o, m + ".seed.json")))
    wins = json.load(open(os.path.join(o, m + ".windows.json")))
    pid, tids = prog["pid"], {v["tid"] for v in prog["vcpus"]}
    w = wins.get(str(pid), {})
    proc = lambda x: next((p for p in x["processes"] if p["tgid"] == pid), {})
    lp, rp, sp = proc(live), proc(rec), proc(seed)
    v1 = prog["vcpus"][1]
    want([v["behaviour"] for v in prog["vcpus"]] == m.split("-"), f"{m}: behaviours {prog['vcpus']}")
    want(live["applicable"] is True and rec["applicable"] is True, f"{m}: gang exits not applicable")
    want(live["lost_events"] == 0 and rec["lost_events"] == 0, f"{m}: lost events")
    # Offline = live, for the program; any other process is one of its
    # vCPU threads (a trace-cmd file names no thread groups: the thread that
    # never ran its vcore stands in) with no guest exits.
    want({k: lp.get(k) for k in keys} == {k: rp.get(k) for k in keys},
         f"{m}: live {lp}, trace-cmd {rp}")
    for p in live["processes"] + rec["processes"]:
        want(p["tgid"] == pid or (p["tgid"] in tids and p["guest_exits"] == 0),
             f"{m}: process {p}")
    tot = lambda x: sorted((r["source"], r["name"], r["count"]) for r in x["exit_reasons"])
    want(tot(live) == tot(rec), f"{m}: exit reasons live {tot(live)}, trace-cmd {tot(rec)}")
    vcpu = lambda x: sorted((r["vcpu"], r["name"], r["count"]) for r in x["exit_reasons_by_vcpu"]
                            if r["source"] == "powerpc")
    want(vcpu(live) == vcpu(rec), f"{m}: per-vCPU exits live {vcpu(live)}, trace-cmd {vcpu(rec)}")
    # topoadvisor = the second reading of the same file.
    want(rp.get("gang_exits") == w.get("ganged", 0), f"{m}: gang exits {rp.get('gang_exits')}, windows.py {w}")
    want(rp.get("core_runs") == w.get("windows", 0), f"{m}: core runs {rp.get('core_runs')}, windows.py {w}")
    want(rp.get("bailouts") == w.get("bailouts", 0), f"{m}: bailouts {rp.get('bailouts')}, windows.py {w}")
    want(rp.get("cedes") == sum(w.get("ceded_exits_by_vcpu", {}).values()),
         f"{m}: cedes {rp.get('cedes')}, windows.py {w.get('ceded_exits_by_vcpu')}")
    # One vcore per VM: the seed's per-tgid rule must agree.
    if rp.get("bailouts") == 0:
        want(sp.get("gang_exits") == rp.get("gang_exits"),
             f"{m}: seed {sp.get('gang_exits')}, vcore {rp.get('gang_exits')}")
    byv = {(r["vcpu"], r["name"]): r["count"] for r in rec["exit_reasons_by_vcpu"]}
    n2 = w.get("n_runnable_2", 0)
    share[m] = w.get("ganged", 0) / max(w.get("windows", 0), 1)
    if m == "spin-idle":
        want(w.get("ceded_exits_by_vcpu", {}).get("1", 0) > 0, f"{m}: vCPU 1 never ceded: {w}")
        want(w.get("busy_ceded", 0) > 0, f"{m}: no window with vCPU 1 ceded beside a busy vCPU 0: {w}")
        want(rp.get("gang_exits", 0) <= n2 - w.get("busy_ceded", 0),
             f"{m}: busy+ceded windows counted as ganged: {rp.get('gang_exits')} of {w}")
    if m == "spin-spin":
        want(v1["counter"] > 0, f"{m}: vCPU 1's counter {v1['counter']}: the secondary thread never ran")
        want(w.get("both_ran", 0) > 0, f"{m}: no window with both vCPUs in the guest: {w}")
        want(rp.get("gang_exits", 0) >= w.get("busy_busy", 0),
             f"{m}: busy+busy windows not counted: {rp.get('gang_exits')} of {w}")
    if m == "spin-hcall":
        sys1 = byv.get((1, "SYSCALL"), 0)
        want(sys1 > 0, f"{m}: vCPU 1 made no hypercall (SYSCALL exits by vCPU: {byv})")
        want(v1["hcalls"] == sys1, f"{m}: vCPU 1 made {v1['hcalls']} hypercalls, {sys1} SYSCALL exits")
        hc = sum(r["count"] for r in rec["exit_reasons"] if r["name"] == "PAPR_HCALL")
        want(hc == v1["hcalls"], f"{m}: {hc} PAPR_HCALL user-space exits, {v1['hcalls']} hypercalls")
        want(v1["counter"] - v1["hcalls"] in (0, 1), f"{m}: vCPU 1 counter {v1['counter']}, hcalls {v1['hcalls']}")
    print(f"{m}: vCPU 0 {prog['vcpus'][0]['counter']}, vCPU 1 {v1['counter']} ({v1['hcalls']} hcalls); "
          f"windows {w.get('windows')}, n_runnable=2 {n2}, ganged vcore {rp.get('gang_exits')} "
          f"seed {sp.get('gang_exits')}, busy+ceded {w.get('busy_ceded', 0)}, busy+busy "
          f"{w.get('busy_busy', 0)} (both ran {w.get('both_ran', 0)}), ceded exits {rp.get('cedes')}, "
          f"SYSCALL by vCPU 1 {byv.get((1, 'SYSCALL'), 0)}, bailouts {rp.get('bailouts')}")
want(share["spin-spin"] > share["spin-idle"],
     f"ganged share of windows: spin+spin {share['spin-spin']:.2f}, spin+idle {share['spin-idle']:.2f}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
stamp "checks"
pass
