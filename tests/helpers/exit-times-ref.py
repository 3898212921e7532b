#!/usr/bin/env python3
"""Exit handling times computed from `trace-cmd report -R -t FILE` text alone.

usage: trace-cmd report -R -t FILE | exit-times-ref.py

An independent reading of the rule `topoadvisor exits` times exits by (its
own reader, libtraceevent's here): an exit (kvm:kvm_exit, kvm_hv:
kvm_guest_exit) is timed to the next entry (kvm:kvm_entry, kvm_hv:
kvm_guest_enter) of the same vCPU of the same VM.  The VM of a POWER event
is the tgid the recording thread's last kvmppc_run_core named; with no
kvmppc_run_core seen yet (POWER9) the thread; an x86 event's is its thread (a recording names no thread groups).
An exit followed by another exit of its vCPU, or by the end, is unmatched;
a "CPU:n [LOST n EVENTS]" or "[EVENTS DROPPED]" line leaves every waiting exit untimed
(counted when its entry comes); an entry with
nothing waiting is unpaired.  Prints JSON: {"reasons": {"SOURCE CODE TGID
VCPU": [count, pairs, total_ns, min_ns, max_ns]}, "unmatched": n,
"gap": n, "unpaired": n, "entries": n}.
"""
import json
import re
import sys

LINE = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d{9}):\s+(\w+):\s+(.*)$")
runner_tgid = {}
waiting = {}    # (vm, vcpu) -> (ts, reason key)
reasons = {}
out = {"unmatched": 0, "gap": 0, "unpaired": 0, "entries": 0}


def fields(text):
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


for line in sys.stdin:
    if re.match(r"CPU:\d+ \[(LOST \d+ EVENTS|EVENTS DROPPED)\]", line.strip()):
        for k in waiting:
            waiting[k] = waiting[k][:2] + (True,)
        continue
    m = LINE.match(line)
    if not m:
        continue
    pid, ts, event, f = int(m.group(2)), int(m.group(4)) * 10**9 + int(m.group(5)), \
        m.group(6), fields(m.group(7))
    if event == "kvmppc_run_core":
        runner_tgid[pid] = int(f["tgid"])
        continue
    if event in ("kvm_guest_exit", "kvm_guest_enter"):
        # Before any kvmppc_run_core (POWER9: none at all) the thread is the VM.
        attributed = runner_tgid.get(pid, 0 if runner_tgid else pid)
        vm = attributed or pid
    elif event in ("kvm_exit", "kvm_entry"):
        vm = attributed = pid
    else:
        continue
    vcpu = int(f.get("vcpu_id", "-1"), 0)
    if event in ("kvm_guest_exit", "kvm_exit"):
        if event == "kvm_exit":
            source = "svm" if f.get("isa") == "2" else "vmx"
            code = int(f["exit_reason"], 0)
        else:
            source, code = "powerpc", int(f.get("trap", f.get("reason")), 0)
        key = "%s %d %d %d" % (source, code, attributed, vcpu)
        reasons.setdefault(key, [0, 0, 0, None, 0])[0] += 1
        if (vm, vcpu) in waiting:
            out["unmatched"] += 1
        waiting[(vm, vcpu)] = (ts, key, False)
    else:
        out["entries"] += 1
        w = waiting.pop((vm, vcpu), None)
        if w is None:
            out["unpaired"] += 1
            continue
        if w[2]:
            out["gap"] += 1
            continue
        d = ts - w[0]
        r = reasons[w[1]]
        r[1] += 1
        r[2] += d
        r[3] = d if r[3] is None else min(r[3], d)
        r[4] = max(r[4], d)
out["unmatched"] += len(waiting)
out["reasons"] = reasons
json.dump(out, sys.stdout, indent=1, sort_keys=True)
