#!/usr/bin/env python3
"""The vcore windows of a kvm_hv recording, read independently of topoadvisor.

A window is one kvmppc_run_core Enter..Exit on one runner thread; between
them the runner records one kvm_guest_exit per vCPU of the vcore (trap 0:
that vCPU took no interrupt of its own in the guest; ceded: it had ceded).
This reads `trace-cmd report -R` (the raw field values), so the tests can
check topoadvisor's counts against a second reading of the same file, and
classifies each window with n_runnable = 2 at its Exit (the vCPUs that stay
runnable: one that leaves for user space is no longer counted):

  busy_ceded  one vCPU's exit says ceded, the other's not: forced = 1, the
              rule (n_runnable - cedes > 1) does not count it
  busy_busy   neither ceded: counted as a ganged exit
  both_in_guest  busy_busy and both vCPUs took an interrupt of their own
              (trap != 0): both hardware threads were in the guest's context
              when the core exited.  That is the kernel's view, no proof that
              a thread executed guest code: on QEMU without the SMT patch a
              secondary that never ran a guest instruction still leaves on
              the hypervisor decrementer.  Proof is in the program's counters
              and in exits only executed code makes (SYSCALL, ceded).  Nor
              is the pc: TCG takes interrupts where a translated block
              begins, so a tight loop always exits at its first address.

usage: windows.py TRACE.dat [TGID]    prints one JSON object (per tgid if
                                       no TGID is given)
"""
import collections
import json
import re
import subprocess
import sys

LINE = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\w+):\s+(.*)$")


def fields(text):
    return {k: v for k, v in re.findall(r"(\w+)=(\S+)", text)}


def records(path):
    """(pid, event, fields) of every kvm_hv/kvm record, in file order."""
    out = subprocess.run(["trace-cmd", "report", "-R", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            yield int(m.group(2)), m.group(5), fields(m.group(6))


def summarize(path):
    """Per tgid: windows, the rule's ganged count, and the classes above."""
    runs = {}                   # runner pid -> (tgid, [exits]) of its open window
    out = collections.defaultdict(collections.Counter)
    ceded_by_vcpu = collections.defaultdict(collections.Counter)
    traps_by_vcpu = collections.defaultdict(collections.Counter)
    for pid, ev, f in records(path):
        if ev == "kvmppc_run_core":
            tgid = int(f["tgid"])
            if f["where"] == "0":
                runs[pid] = (tgid, [])
                continue
            opened = runs.pop(pid, None)
            s = out[tgid]
            if opened is None:
                s["bailouts"] += 1
                continue
            exits = opened[1]
            n = int(f["n_runnable"])
            ceded = sum(1 for e in exits if e["ceded"] != "0")
            s["windows"] += 1
            s[f"n_runnable_{n}"] += 1
            if n - ceded > 1:
                s["ganged"] += 1
            if n == 2 and ceded == 1:
                s["busy_ceded"] += 1
            if n == 2 and ceded == 0:
                s["busy_busy"] += 1
                if len(exits) == 2 and all(e["trap"] != "0" for e in exits):
                    s["both_in_guest"] += 1
        elif ev == "kvm_guest_exit" and pid in runs:
            tgid = runs[pid][0]
            runs[pid][1].append(f)
            vcpu = f["vcpu_id"]
            if f["ceded"] != "0":
                ceded_by_vcpu[tgid][vcpu] += 1
            traps_by_vcpu[tgid][f"{vcpu}:{int(f['trap'])}"] += 1
    result = {}
    for tgid, s in out.items():
        result[tgid] = dict(s)
        result[tgid]["ceded_exits_by_vcpu"] = dict(ceded_by_vcpu[tgid])
        result[tgid]["exits_by_vcpu_trap"] = dict(traps_by_vcpu[tgid])
    return result


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: windows.py TRACE.dat [TGID]", file=sys.stderr)
        return 2
    res = summarize(argv[1])
    if len(argv) == 3:
        res = res.get(int(argv[2]), {})
    print(json.dumps(res, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
