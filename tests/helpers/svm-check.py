#!/usr/bin/env python3
"""Checks an `exits --json` / `trace --json` answer on real nested-SVM events
against what tests/helpers/kvmx86 did, and optionally against trace-cmd's own
raw report (`trace-cmd report -R`) of the same recording.

usage: svm-check.py TAG PROGRAM_OUTPUT ANSWER_JSON [REPORT]
  PROGRAM_OUTPUT holds kvmx86's line "kvmx86: pid=P outs=N hlt=1 cpuids=M
  restarts=1"; ANSWER_JSON may be the same file (`trace -- kvmx86` prints
  the program's line, then the JSON).  REPORT given: the answer is a
  recording's (its x86 entries are per thread) and every exit reason must
  match trace-cmd's count of the raw records.
Prints the exit counts; exit 1 (after saying what differs) when anything does.
"""
import json
import re
import sys
from collections import Counter


def main():
    tag, prog_out, answer = sys.argv[1:4]
    report = sys.argv[4] if len(sys.argv) > 4 else None
    text = open(prog_out).read()
    m = re.search(r"^kvmx86: pid=(\d+) outs=(\d+) hlt=1 cpuids=(\d+) restarts=1$", text, re.M)
    if not m:
        print(f"FAIL: {tag}: no kvmx86 line in {prog_out}: {text[:300]!r}")
        return 1
    pid, outs, cpuids = (int(g) for g in m.groups())
    raw = open(answer).read()
    j = json.loads(raw[m.end():] if answer == prog_out else raw)

    bad = []

    def check(what, got, want):
        if got != want:
            bad.append(f"{what}: {got!r}, expected {want!r}")

    r = {(x["source"], x["name"]): x["count"] for x in j["exit_reasons"]}
    check("IOIO", r.get(("svm", "IOIO")), outs)
    check("CPUID", r.get(("svm", "CPUID")), cpuids)
    check("HLT", r.get(("svm", "HLT")), 1)
    check("userspace IO", r.get(("userspace", "IO")), outs)
    check("userspace HLT", r.get(("userspace", "HLT")), 1)
    check("userspace RESTART", r.get(("userspace", "RESTART")), 1)
    check("vmx reasons", [k for k in r if k[0] == "vmx"], [])
    check("lost", (j["lost_events"], j["lost_events_exact"]), (0, True))
    check("applicable", j["applicable"], False)
    check("x86_per_thread", j["x86_per_thread"], report is not None)
    procs = [(p["tgid"], p["comm"]) for p in j["processes"]]
    check("processes", procs, [(pid, "kvmx86")])
    svm = sum(c for (s, _), c in r.items() if s == "svm")
    check("guest_exits", [p["guest_exits"] for p in j["processes"]], [svm])
    check("svm vCPUs", {x["vcpu"] for x in j["exit_reasons_by_vcpu"] if x["source"] == "svm"},
          {0})

    if report:
        # Every kvm_exit and kvm_userspace_exit record, by its raw fields.
        want_svm, want_user = Counter(), Counter()
        for line in open(report):
            f = dict(re.findall(r"(\w+)=(-?\w+)", line))
            if " kvm_exit:" in line:
                check("report isa", f.get("isa"), "2")
                want_svm[int(f["exit_reason"], 0)] += 1
            elif " kvm_userspace_exit:" in line:
                e = int(f["errno"])
                want_user[e if e < 0 else int(f["reason"])] += 1
        check("events vs trace-cmd", j["events"],
              sum(want_svm.values()) + sum(want_user.values()))
        for src, want in (("svm", want_svm), ("userspace", want_user)):
            got = {x["reason"]: x["count"] for x in j["exit_reasons"] if x["source"] == src}
            check(f"{src} reasons vs trace-cmd", got, dict(want))

    print(f"{tag} exits:", ", ".join(f"{s}/{n} {c}" for (s, n), c in sorted(r.items())))
    for b in bad:
        print(f"FAIL: {tag}: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
