#!/usr/bin/env python3
"""Writes a small trace-cmd v6 file (or perf.data) as a big-endian POWER8 host would.

usage: mkpowertrace.py OUT [--lost N] [--little] [--x86] [--perf | --perf-pipe]
                         [--page BYTES] [--repeat N] [--p9 [--gap]]

64 KiB pages, 64-bit longs, the kernel's own kvm_hv field types (int, pid_t,
unsigned long, u8) and a doubled runner_vcpu in the print format, on two
CPUs: runner threads 5001 (CPU 0) and 5002 (CPU 1) of QEMU 4242 run two
vcores at once, so the per-vcore and seed rules differ.  Answers (checked by
tests/integration/exits-bigendian.sh):
  tgid 4242: vcore rule 4 gang exits, seed rule 2; 8 core runs, 1 bail-out,
             16 guest exits, 4 cedes; H_DATA_STORAGE 12, HV_DECREMENTER 2,
             EXTERNAL 2
  tgid -5:   1 core run, 0 gang exits, one exit with trap -1 on vCPU -1
--lost N writes per-CPU stats with N overruns (the counts become lower bounds).
--perf writes the same events as `perf record -e kvm_hv:...` would (perf.data
file mode, the host's byte order, the samples in two FINISHED_ROUND rounds
with each CPU's events together, COMM records naming the threads); with
--lost N a LOST record of N events (exact for perf.data).  --perf-pipe:
the same in pipe mode (`perf record -o -`).
--page BYTES sets the ring-buffer page size (default 64 KiB, 4 KiB with
--x86); --repeat N repeats the whole sequence N times (all counts but the
seed rule's gang exits scale by N; events spill over several pages).
--x86 writes an x86 host's file instead (little-endian, 4 KiB pages, the
kernel's kvm:kvm_exit and kvm:kvm_userspace_exit formats, threads 6001 on
vCPU 0 and 6002 on vCPU 1):
  vmx HLT 5, vmx IO_INSTRUCTION 3, vmx INVALID_STATE (failed entry) 1,
  svm HLT 2, userspace IO 3; no ganged exits (not applicable).
--p9 writes a POWER9 host's file instead (kvmppc_run_core defined but never
fired; kvm_guest_exit and kvm_guest_enter; vCPU threads 7001 on vCPU 0, CPU
0, and 7002 on vCPU 1, CPU 1; a step every 1000 ns):
  H_FAC_UNAVAIL (msgsndp doorbells) 3 on vCPU 0 (timed 2000, 1000, 2000 ns)
  and 1 on vCPU 1 (2000 ns); HV_DECREMENTER 1 on vCPU 1 (2000 ns) and 1 on
  vCPU 0 that the recording ends before its entry (unmatched); 2 entries
  with no exit before them.  --gap starts CPU 0's records from the second
  doorbell's entry on a page flagged "events missed": that doorbell is not
  timed (vCPU 0: 2 timed, 4000 ns), one pair across lost events.
"""
import struct
import sys

out = sys.argv[1]
lost = int(sys.argv[sys.argv.index("--lost") + 1]) if "--lost" in sys.argv else 0
x86 = "--x86" in sys.argv
big = "--little" not in sys.argv and not x86
E = ">" if big else "<"
PAGE = int(sys.argv[sys.argv.index("--page") + 1]) if "--page" in sys.argv else \
    4096 if x86 else 65536
REPEAT = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
P9 = "--p9" in sys.argv
GAP = "--gap" in sys.argv

HEADER_PAGE = ("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
               "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
               "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
               "\tfield: char data;\toffset:16;\tsize:%d;\tsigned:1;\n" % (PAGE - 16))
HEADER_EVENT = ("# compressed entry header\n\ttype_len    :    5 bits\n"
                "\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n"
                "\tpadding     : type == 29\n\ttime_extend : type == 30\n"
                "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n")
COMMON = ("\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
          "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
          "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
          "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n")
RUN_CORE = ("name: kvmppc_run_core\nID: 1001\nformat:\n" + COMMON +
            "\tfield:int n_runnable;\toffset:8;\tsize:4;\tsigned:1;\n"
            "\tfield:int runner_vcpu;\toffset:12;\tsize:4;\tsigned:1;\n"
            "\tfield:int where;\toffset:16;\tsize:4;\tsigned:1;\n"
            "\tfield:pid_t tgid;\toffset:20;\tsize:4;\tsigned:1;\n\n"
            'print fmt: "%s runner_vcpu==%d runner_vcpu==%d runnable=%d", '
            'REC->where ? "Exit" : "Enter", REC->runner_vcpu, REC->runner_vcpu, REC->n_runnable\n')
GUEST_EXIT = ("name: kvm_guest_exit\nID: 1002\nformat:\n" + COMMON +
              "\tfield:int vcpu_id;\toffset:8;\tsize:4;\tsigned:1;\n"
              "\tfield:int trap;\toffset:12;\tsize:4;\tsigned:1;\n"
              "\tfield:unsigned long pc;\toffset:16;\tsize:8;\tsigned:0;\n"
              "\tfield:unsigned long msr;\toffset:24;\tsize:8;\tsigned:0;\n"
              "\tfield:u8 ceded;\toffset:32;\tsize:1;\tsigned:0;\n\n"
              'print fmt: "VCPU %d: trap=0x%x pc=0x%lx msr=0x%lx, ceded=%d", REC->vcpu_id, '
              'REC->trap, REC->pc, REC->msr, REC->ceded\n')
GUEST_ENTER = ("name: kvm_guest_enter\nID: 1003\nformat:\n" + COMMON +
               "\tfield:int vcpu_id;\toffset:8;\tsize:4;\tsigned:1;\n"
               "\tfield:unsigned long pc;\toffset:16;\tsize:8;\tsigned:0;\n"
               "\tfield:unsigned long pending_exceptions;\toffset:24;\tsize:8;\tsigned:0;\n"
               "\tfield:u8 ceded;\toffset:32;\tsize:1;\tsigned:0;\n\n"
               'print fmt: "VCPU %d: pc=0x%lx pexcp=0x%lx ceded=%d", REC->vcpu_id, REC->pc, '
               'REC->pending_exceptions, REC->ceded\n')

KVM_EXIT = ("name: kvm_exit\nID: 103\nformat:\n" + COMMON +
            "\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
            "\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
            "\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
            "\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
            "\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
            "\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
            "\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
            "\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n"
            "\tfield:u64 requests;\toffset:64;\tsize:8;\tsigned:0;\n\n"
            'print fmt: "vcpu %u reason %u rip 0x%lx", REC->vcpu_id, REC->exit_reason, '
            'REC->guest_rip\n')
USER_EXIT = ("name: kvm_userspace_exit\nID: 42\nformat:\n" + COMMON +
             "\tfield:__u32 reason;\toffset:8;\tsize:4;\tsigned:0;\n"
             "\tfield:int errno;\toffset:12;\tsize:4;\tsigned:1;\n\n"
             'print fmt: "reason %u (%d)", REC->reason, REC->errno\n')

A, B, C = (5001, 0), (5002, 1), (5003, 0)   # (pid, cpu)
steps = [("X", A, 8, 4242)]                   # bail-out before any Enter
for _ in range(3):                            # B's cede lands in A's run (seed: no gang)
    steps += [("N", A, 2, 4242), ("N", B, 2, 4242), ("G", B, 2, 0xe00, 1),
              ("G", A, 0, 0xe00, 0), ("G", A, 1, 0xe00, 0), ("X", A, 2, 4242),
              ("G", B, 3, 0xe00, 0), ("X", B, 2, 4242)]
steps += [("N", A, 2, 4242), ("G", A, 0, 0x980, 1), ("N", B, 2, 4242),   # B resets A's cedes
          ("G", A, 1, 0x980, 0), ("X", A, 2, 4242), ("G", B, 2, 0x500, 0),
          ("G", B, 3, 0x500, 0), ("X", B, 2, 4242)]
steps += [("N", C, -3, -5), ("G", C, -1, -1, 0), ("X", C, -3, -5)]
if x86:
    V0, V1 = (6001, 0), (6002, 1)
    steps = ([("K", V0, 1, 12, 0)] * 5 + [("K", V1, 1, 30, 1)] * 3 +
             [("K", V0, 1, 0x80000021, 0)] + [("K", V1, 2, 0x78, 1)] * 2 +
             [("U", V0, 2)] * 3)
if P9:
    P0, P1 = (7001, 0), (7002, 1)
    steps = [("E", P0, 0), ("E", P1, 1), ("G", P0, 0, 0xf80, 0), ("G", P1, 1, 0x980, 0),
             ("E", P0, 0), ("E", P1, 1), ("G", P0, 0, 0xf80, 0), ("E", P0, 0),
             ("G", P1, 1, 0xf80, 0), ("G", P0, 0, 0xf80, 0), ("E", P1, 1), ("E", P0, 0),
             ("G", P0, 0, 0x980, 0)]
steps = steps * REPEAT

def record(step):
    kind, (pid, cpu) = step[0], step[1]
    if kind == "K":
        return struct.pack(E + "HBBiIIQIIQQIIIIQ", 103, 0, 0, pid, step[3], 0, 0xffffffff81000000,
                           step[2], 0, 0, 0, 0, 0, step[4], 0, 0)
    if kind == "U":
        return struct.pack(E + "HBBiIi", 42, 0, 0, pid, step[2], 0)
    if kind == "E":
        d = struct.pack(E + "HBBiiIQQB", 1003, 0, 0, pid, step[2], 0, 0x1008, 0, 0)
        return d + b"\0" * (-len(d) % 4)
    if kind in "NX":
        return struct.pack(E + "HBBiiiii", 1001, 0, 0, pid, step[2], 0,
                           0 if kind == "N" else 1, step[3])
    d = struct.pack(E + "HBBiiiQQB", 1002, 0, 0, pid, step[2], step[3],
                    0xc000000000001234, 0x8000000000001033, step[4])
    return d + b"\0" * (-len(d) % 4)

percpu = {0: [], 1: []}
stamped = []
ts = 1000000000
for s in steps:
    ts += 1000
    percpu[s[1][1]].append((ts, record(s)))
    stamped.append((ts, s, record(s)))

def page(events, missed=False):
    body, prev = b"", events[0][0]
    for t, data in events:
        header = ((len(data) // 4) << 27 | (t - prev)) if big else \
                 ((t - prev) << 5 | (len(data) // 4))
        body += struct.pack(E + "I", header) + data
        prev = t
    p = struct.pack(E + "QQ", events[0][0], len(body) | (1 << 31 if missed else 0)) + body
    return p + b"\0" * (PAGE - len(p))

def pages(events):
    """The events of one CPU as whole pages, as many as they fill."""
    out, cur, used = b"", [], 16
    for t, data in events:
        if cur and used + 4 + len(data) > PAGE:
            out += page(cur)
            cur, used = [], 16
        cur.append((t, data))
        used += 4 + len(data)
    return out + page(cur)

def u32(v): return struct.pack(E + "I", v)
def u64(v): return struct.pack(E + "Q", v)
def cstr(s): return s.encode() + b"\0"

h = b"\x17\x08\x44tracing" + cstr("6") + bytes([1 if big else 0, 8]) + u32(PAGE)
h += cstr("header_page") + u64(len(HEADER_PAGE)) + HEADER_PAGE.encode()
h += cstr("header_event") + u64(len(HEADER_EVENT)) + HEADER_EVENT.encode()
h += u32(0)                                            # ftrace formats
FORMATS = (KVM_EXIT, USER_EXIT) if x86 else (RUN_CORE, GUEST_EXIT, GUEST_ENTER) if P9 else \
    (RUN_CORE, GUEST_EXIT)
h += u32(1) + cstr("kvm" if x86 else "kvm_hv") + u32(len(FORMATS))
for f in FORMATS:
    h += u64(len(f)) + f.encode()
h += u32(0) + u32(0)                                   # kallsyms, printk
cmdlines = "4242 qemu-system-ppc\n5001 CPU 0/KVM\n5002 CPU 2/KVM\n7001 CPU 0/KVM\n" \
    "7002 CPU 1/KVM\n"
h += u64(len(cmdlines)) + cmdlines.encode()

def perf_data(pipe):
    """perf.data (tools/perf/Documentation/perf.data-file-format.txt)."""
    tracing = b"\x17\x08\x44tracing" + cstr("0.6") + h[len(b"\x17\x08\x44tracing") + 2:]
    sample_type = 1 | 2 | 4 | 128 | 256 | 1024 | 65536   # IP TID TIME CPU PERIOD RAW IDENTIFIER
    ids = {1001: 11, 1002: 12, 103: 13, 42: 14}
    configs = (103, 42) if x86 else (1001, 1002)
    # sample_id_all (bit 18 of the flag bits; bit-fields start at the top on a
    # big-endian host): without it perf would not order events by time.
    flags = 1 << (45 if big else 18)
    def attr(config):
        a = struct.pack(E + "IIQQQQQ", 2, 128, config, 1, sample_type, 4 | 16, flags)
        return a + b"\0" * (128 - len(a))
    def rec(rtype, body):
        return struct.pack(E + "IHH", rtype, 0, 8 + len(body)) + body
    def sample_id(pid, tid, t, cpu):   # the trailer sample_id_all adds to other records
        return struct.pack(E + "II", pid, tid) + u64(t) + struct.pack(E + "II", cpu, 0) + \
            u64(ids[configs[0]])
    def sample(t, step, data):
        pid, cpu = step[1]
        tgid = 4242 if pid in (5001, 5002) else pid
        data += b"\0" * ((-(4 + len(data))) % 8)
        etype = struct.unpack(E + "H", data[:2])[0]
        return rec(9, u64(ids[etype]) + u64(0xc000000000008000) + struct.pack(E + "II", tgid, pid)
                   + u64(t) + struct.pack(E + "II", cpu, 0) + u64(1) + u32(len(data)) + data)
    body = b""
    ts0 = stamped[0][0] - 1
    for pid, tid, comm in ((4242, 4242, "qemu-system-ppc"), (4242, 5001, "CPU 0/KVM"),
                           (4242, 5002, "CPU 2/KVM")):
        c = struct.pack(E + "II", pid, tid) + cstr(comm)
        body += rec(3, c + b"\0" * (-len(c) % 8) + sample_id(pid, tid, ts0, 0))
    events = [(t, s, d) for t, s, d in stamped]
    half = len(events) // 2
    for part in (events[:half], events[half:]):        # two rounds, CPU by CPU
        for cpu in (0, 1):
            body += b"".join(sample(t, s, d) for t, s, d in part if s[1][1] == cpu)
        body += rec(68, b"")
    if lost:
        body += rec(2, u64(ids[configs[0]]) + u64(lost) + sample_id(0, 0, ts, 0))
    if pipe:
        out_ = struct.pack(E + "QQ", 0x32454c4946524550, 16)
        for c in configs:
            out_ += rec(64, attr(c) + u64(ids[c]))
        pad = tracing + b"\0" * (-len(tracing) % 8)
        out_ += struct.pack(E + "IHHI", 66, 0, 12, len(pad)) + pad
        return out_ + body
    attrs_off = 104
    id_off = attrs_off + len(configs) * 144
    data_off = id_off + 8 * len(configs)
    feat_off = data_off + len(body)
    # Features TRACING_DATA (bit 1) and HOSTNAME (bit 3): perf takes a
    # byte-swapped file without HOSTNAME for a pre-2012 one.
    host = b"power8"
    host = u32(64) + host + b"\0" * (64 - len(host))
    tracing_off = feat_off + 32
    host_off = tracing_off + len(tracing)
    hdr = struct.pack(E + "QQQ", 0x32454c4946524550, 104, 144)
    hdr += u64(attrs_off) + u64(len(configs) * 144) + u64(data_off) + u64(len(body))
    hdr += u64(0) + u64(0) + u64(1 << 1 | 1 << 3) + u64(0) * 3
    attrs = b"".join(attr(c) + u64(id_off + 8 * i) + u64(8) for i, c in enumerate(configs))
    idtab = b"".join(u64(ids[c]) for c in configs)
    feats = u64(tracing_off) + u64(len(tracing)) + u64(host_off) + u64(len(host))
    return hdr + attrs + idtab + body + feats + tracing + host
if "--perf" in sys.argv or "--perf-pipe" in sys.argv:
    open(out, "wb").write(perf_data("--perf-pipe" in sys.argv))
    sys.exit(0)
h += u32(2)                                            # CPUs
h += b"options  \0"
for cpu in (0, 1):
    st = ("CPU: %d\nentries: %d\noverrun: %d\ncommit overrun: 0\nbytes: 0\n"
          "oldest event ts: 1.000000\nnow ts: 2.000000\ndropped events: 0\n"
          "read events: 0\n" % (cpu, len(percpu[cpu]), lost if cpu == 0 else 0))
    h += struct.pack(E + "HI", 2, len(st) + 1) + cstr(st)
h += struct.pack(E + "H", 0)
h += b"flyrecord\0"
if GAP:
    # CPU 0's records from the second doorbell's entry (step 8) on a page of
    # their own that says events were lost before it.
    cut = [t for t, _, _ in stamped].index(1000000000 + 8 * 1000)
    first = [e for e in percpu[0] if e[0] < stamped[cut][0]]
    data = [page(first) + page(percpu[0][len(first):], missed=True), pages(percpu[1])]
else:
    data = [pages(percpu[0]), pages(percpu[1])]
start = (len(h) + 32 + PAGE - 1) // PAGE * PAGE
h += u64(start) + u64(len(data[0])) + u64(start + len(data[0])) + u64(len(data[1]))
h += b"\0" * (start - len(h))
open(out, "wb").write(h + data[0] + data[1])
