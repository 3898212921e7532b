#!/usr/bin/env python3
"""Judges what tests/power8/smt.sh brought back from an emulated POWER8 host
with two threads per core: fresh output (tests/integration/power8-smt.sh) or
the committed fixtures (tests/integration/exits-real.sh).

usage: smt_check.py DIR smt|stock

DIR holds, per mode NAME in spin-idle, spin-spin, spin-hcall: NAME.dat
(trace-cmd's recording), NAME.live (the program's JSON line, then `trace
--json`'s) and maybe NAME.windows.json (tests/power8/windows.py's reading
of NAME.dat; read afresh when trace-cmd is there, and then it must equal
the stored one).  `exits` is run on each recording ($TOPOADVISOR, both
rules).  Checked for every mode: topoadvisor's windows, ganged exits,
bail-outs and cedes equal the second reading; the offline counts equal the
live ones; the seed's rule equals the per-vcore one (one vcore per VM).
Then, for the patched kernel (smt), whose secondary threads run:
  spin-idle   vCPU 1 (the secondary thread) ceded, and no window where it
              had ceded beside a busy vCPU 0 is counted as ganged;
  spin-spin   vCPU 1's counter moved; windows with n_runnable = 2 and both
              vCPUs in the guest exist and all are counted; ganged exits are
              a larger share of the windows than with an idle sibling;
  spin-hcall  vCPU 1 made hypercalls: as many SYSCALL exits of vCPU 1 and
              user-space exits as the program counted.
For Debian's kernel as it is (stock), whose secondaries never execute a
guest instruction: vCPU 1's counter stays 0, it never makes a SYSCALL exit
nor cedes, and yet the rule counts ganged exits with both vCPUs "in the
guest" - the kernel's bookkeeping, not ganging.
Relations only: the counts swing with the load of the machine.  Prints one
line of counts per mode; exit 1 with the failures listed.
"""
import json
import os
import shutil
import subprocess
import sys

MODES = ("spin-idle", "spin-spin", "spin-hcall")
KEYS = ("gang_exits", "core_runs", "bailouts", "guest_exits", "cedes")
HERE = os.path.dirname(os.path.abspath(__file__))


def exits(path, algo):
    out = subprocess.run([os.environ["TOPOADVISOR"], "--json", "exits", "--algorithm", algo,
                          path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: exits --algorithm {algo} {path}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def windows(d, m, bad):
    stored = os.path.join(d, m + ".windows.json")
    fresh = None
    if shutil.which("trace-cmd"):
        fresh = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "windows.py"),
                                           os.path.join(d, m + ".dat")], capture_output=True,
                                          text=True, check=True).stdout)
    if os.path.exists(stored):
        kept = json.load(open(stored))
        if fresh is not None and fresh != kept:
            bad.append(f"{m}: windows.py now reads {fresh}, the stored reading is {kept}")
        return kept
    if fresh is None:
        sys.exit("FAIL: no trace-cmd to read the recording with (scripts/deps.sh)")
    return fresh


def check(d, kind):
    bad = []

    def want(cond, what):
        if not cond:
            bad.append(what)

    share = {}
    for m in MODES:
        first, _, rest = open(os.path.join(d, m + ".live")).read().partition("\n")
        prog, live = json.loads(first), json.loads(rest)
        rec = exits(os.path.join(d, m + ".dat"), "vcore")
        seed = exits(os.path.join(d, m + ".dat"), "seed")
        pid, tids = prog["pid"], {v["tid"] for v in prog["vcpus"]}
        w = windows(d, m, bad).get(str(pid), {})

        def proc(x):
            return next((p for p in x["processes"] if p["tgid"] == pid), {})
        lp, rp, sp = proc(live), proc(rec), proc(seed)
        v1 = prog["vcpus"][1]
        want([v["behaviour"] for v in prog["vcpus"]] == m.split("-"), f"{m}: vCPUs {prog['vcpus']}")
        want(live["applicable"] is True and rec["applicable"] is True, f"{m}: not applicable")
        want(live["lost_events"] == 0 and rec["lost_events"] == 0, f"{m}: lost events")
        # Offline = live for the program; any other process is one of its
        # vCPU threads (a trace-cmd file names no thread groups: a thread
        # that never ran its vcore stands in) without guest exits.
        want({k: lp.get(k) for k in KEYS} == {k: rp.get(k) for k in KEYS},
             f"{m}: live {lp}, trace-cmd {rp}")
        for p in live["processes"] + rec["processes"]:
            want(p["tgid"] == pid or (p["tgid"] in tids and p["guest_exits"] == 0),
                 f"{m}: process {p}")

        def totals(x):
            return sorted((r["source"], r["name"], r["count"]) for r in x["exit_reasons"])

        def per_vcpu(x):
            return sorted((r["vcpu"], r["name"], r["count"]) for r in x["exit_reasons_by_vcpu"]
                          if r["source"] == "powerpc")
        want(totals(live) == totals(rec), f"{m}: reasons live {totals(live)}, trace-cmd {totals(rec)}")
        want(per_vcpu(live) == per_vcpu(rec), f"{m}: per vCPU live {per_vcpu(live)}, trace-cmd {per_vcpu(rec)}")
        # topoadvisor = the second reading of the same file.
        for k, wk in (("gang_exits", "ganged"), ("core_runs", "windows"), ("bailouts", "bailouts")):
            want(rp.get(k) == w.get(wk, 0), f"{m}: {k} {rp.get(k)}, windows.py {w}")
        ceded = w.get("ceded_exits_by_vcpu", {})
        want(rp.get("cedes") == sum(ceded.values()), f"{m}: cedes {rp.get('cedes')}, windows.py {ceded}")
        if rp.get("bailouts") == 0:
            want(sp.get("gang_exits") == rp.get("gang_exits"),
                 f"{m}: seed rule {sp.get('gang_exits')}, vcore rule {rp.get('gang_exits')}")
        byv = {(r["vcpu"], r["name"]): r["count"] for r in rec["exit_reasons_by_vcpu"]}
        sys1 = byv.get((1, "SYSCALL"), 0)
        n2 = w.get("n_runnable_2", 0)
        gang = rp.get("gang_exits", 0)
        share[m] = w.get("ganged", 0) / max(w.get("windows", 0), 1)
        if kind == "stock":
            want(v1["counter"] == 0 and sys1 == 0 and ceded.get("1", 0) == 0,
                 f"{m}: vCPU 1 ran on the unpatched kernel: {v1}, SYSCALL {sys1}, ceded {ceded}")
            if m != "spin-hcall":
                want(gang > 0 and w.get("both_in_guest", 0) > 0,
                     f"{m}: no ganged exits by the kernel's bookkeeping: {w}")
        elif m == "spin-idle":
            want(ceded.get("1", 0) > 0, f"{m}: vCPU 1 never ceded: {w}")
            want(w.get("busy_ceded", 0) > 0, f"{m}: no window with vCPU 1 ceded beside a busy vCPU 0: {w}")
            want(gang <= n2 - w.get("busy_ceded", 0), f"{m}: busy+ceded windows counted: {gang} of {w}")
        elif m == "spin-spin":
            want(v1["counter"] > 0, f"{m}: vCPU 1's counter {v1['counter']}: the secondary never ran")
            want(w.get("both_in_guest", 0) > 0, f"{m}: no window with both vCPUs in the guest: {w}")
            want(gang >= w.get("busy_busy", 0), f"{m}: busy+busy windows not counted: {gang} of {w}")
        else:
            want(sys1 > 0, f"{m}: vCPU 1 made no hypercall (SYSCALL exits by vCPU: {byv})")
            want(v1["hcalls"] == sys1, f"{m}: vCPU 1 made {v1['hcalls']} hypercalls, {sys1} SYSCALL exits")
            hc = sum(r["count"] for r in rec["exit_reasons"] if r["name"] == "PAPR_HCALL")
            want(hc == v1["hcalls"], f"{m}: {hc} PAPR_HCALL exits, {v1['hcalls']} hypercalls")
            want(v1["counter"] - v1["hcalls"] in (0, 1),
                 f"{m}: vCPU 1's counter {v1['counter']}, {v1['hcalls']} hypercalls")
        print(f"{kind} {m}: counters {prog['vcpus'][0]['counter']} / {v1['counter']}; windows "
              f"{w.get('windows')}, n_runnable=2 {n2}, ganged {gang} (seed {sp.get('gang_exits')}), "
              f"busy+ceded {w.get('busy_ceded', 0)}, busy+busy {w.get('busy_busy', 0)} (both in "
              f"the guest {w.get('both_in_guest', 0)}), ceded exits {rp.get('cedes')}, SYSCALL by "
              f"vCPU 1 {sys1}, bail-outs {rp.get('bailouts')}")
    if kind == "smt":
        want(share["spin-spin"] > share["spin-idle"],
             f"ganged share of windows: spin+spin {share['spin-spin']:.2f}, "
             f"spin+idle {share['spin-idle']:.2f}")
    return bad


def main(argv):
    if len(argv) != 3 or argv[2] not in ("smt", "stock"):
        print("usage: smt_check.py DIR smt|stock", file=sys.stderr)
        return 2
    bad = check(argv[1], argv[2])
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
