#!/usr/bin/env python3
"""Checks an `exits --json` / `trace --json` answer on real nested-SVM events
against what tests/helpers/kvmx86 did, and optionally against trace-cmd's own
raw report (`trace-cmd report -R`) of the same recording.

usage: svm-check.py [--host] TAG PROGRAM_OUTPUT ANSWER_JSON [REPORT]
  PROGRAM_OUTPUT holds kvmx86's lines "kvmx86: pid=P vcpus=V outs=N hlt=1
  cpuids=M restarts=1" and "kvmx86: vcpu=I tid=T"; ANSWER_JSON may be the
  same file (`trace -- kvmx86` prints the program's lines, then the JSON).
  Live answers count per process: one entry, the program.  REPORT given: the
  answer is a recording's, whose x86 entries are per thread (one per vCPU
  thread, named vcpuI), and every exit reason must match trace-cmd's count
  of the raw records.  --host: a live answer on this machine's own KVM (PVM),
  which fires no kvm_exit: only the program's kvm_userspace_exit counts are
  checked, and other processes (other tests tracing at the same time) may
  be in the answer; the program's threads must not.
Prints the exit counts; exit 1 (after saying what differs) when anything does.
"""
import json
import re
import sys
from collections import Counter


def main():
    args = sys.argv[1:]
    host = args[0] == "--host"
    if host:
        args = args[1:]
    tag, prog_out, answer = args[:3]
    report = args[3] if len(args) > 3 else None
    text = open(prog_out).read()
    m = re.search(r"^kvmx86: pid=(\d+) vcpus=(\d+) outs=(\d+) hlt=1 cpuids=(\d+) restarts=1\n"
                  r"((?:kvmx86: vcpu=\d+ tid=\d+\n)+)", text, re.M)
    if not m:
        print(f"FAIL: {tag}: no kvmx86 lines in {prog_out}: {text[:300]!r}")
        return 1
    pid, nv, outs, cpuids = (int(g) for g in m.groups()[:4])
    tids = {int(i): int(t) for i, t in re.findall(r"vcpu=(\d+) tid=(\d+)", m.group(5))}
    raw = open(answer).read()
    j = json.loads(raw[m.end():] if answer == prog_out else raw)

    bad = []

    def check(what, got, want):
        if got != want:
            bad.append(f"{what}: {got!r}, expected {want!r}")

    check("vCPU threads", sorted(tids), list(range(nv)))
    per_thread = report is not None
    ours = set(tids.values()) | {pid}
    byv = j["exit_reasons_by_vcpu"]
    r = Counter()
    for x in byv:
        if not host or x["tgid"] in ours:
            r[(x["source"], x["name"])] += x["count"]
    for key, each in ((("svm", "IOIO"), outs), (("svm", "CPUID"), cpuids), (("svm", "HLT"), 1),
                      (("userspace", "IO"), outs), (("userspace", "HLT"), 1),
                      (("userspace", "RESTART"), 1)):
        if not host or key[0] == "userspace":
            check("/".join(key), r.get(key), each * nv)
    check("other sources", [k for k in r if k[0] not in (("userspace",) if host
                                                         else ("svm", "userspace"))], [])
    if not host:
        totals = {(x["source"], x["name"]): x["count"] for x in j["exit_reasons"]}
        check("totals vs the per-vCPU rows", totals, dict(r))
    check("lost", (j["lost_events"], j["lost_events_exact"]), (0, True))
    if not host:
        check("applicable", j["applicable"], False)
    check("x86_per_thread", j["x86_per_thread"], per_thread)

    # Who each entry is: the process live, the vCPU's thread in a recording.
    owner = {i: tids[i] if per_thread else pid for i in tids}
    procs = [(p["tgid"], p["comm"]) for p in j["processes"] if not host or p["tgid"] in ours]
    if per_thread:
        check("processes", procs, sorted((tids[i], f"vcpu{i}") for i in tids))
    else:
        # A process gone before the reader named it has the name the kernel
        # saved (saved_cmdlines, 128 entries by default): its own, one of its
        # threads', or none when a busy host recycled them.
        names = {"kvmx86", None} | {f"vcpu{i}" for i in tids}
        check("processes", [(t, c if c not in names else "ok") for t, c in procs],
              [(pid, "ok")])
    for i in tids if not host else ():
        mine = {x["name"]: x["count"] for x in byv
                if x["source"] == "svm" and x["vcpu"] == i and x["tgid"] == owner[i]}
        check(f"vCPU {i} svm", {k: mine.get(k) for k in ("IOIO", "CPUID", "HLT")},
              {"IOIO": outs, "CPUID": cpuids, "HLT": 1})
    if not host:
        check("svm vCPUs", {x["vcpu"] for x in byv if x["source"] == "svm"}, set(range(nv)))
    for p in j["processes"] if not host else ():
        svm = sum(x["count"] for x in byv if x["source"] == "svm" and x["tgid"] == p["tgid"])
        check(f"guest_exits of {p['tgid']}", p["guest_exits"], svm)
    if per_thread:
        for i, t in tids.items():
            mine = {x["name"]: x["count"] for x in byv
                    if x["source"] == "userspace" and x["tgid"] == t}
            check(f"thread {t} userspace", mine, {"IO": outs, "HLT": 1, "RESTART": 1})

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
