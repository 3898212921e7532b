#!/bin/sh
# Real x86 KVM exits: an x86_64 TCG guest with nested SVM (qemu64,+svm,
# built by scripts/svm-host.sh) loads kvm-amd and runs tests/helpers/kvmx86,
# whose exits are known: OUTS IOIO, CPUIDS CPUID and one HLT kvm:kvm_exit,
# OUTS KVM_EXIT_IO and one KVM_EXIT_HLT kvm:kvm_userspace_exit, and one
# immediate-exit run (errno -4).  Inside, the topoadvisor binary under test
# runs `probe --json` and `trace --json -- kvmx86` on the real events, and
# trace-cmd records a second run; here, `exits --json` reads that recording
# and both are checked against the known counts and against trace-cmd's own
# raw report of the recording.
#
# The guest's init (see svm-host.sh) sends results on its second serial port
# as "@@TA begin NAME", base64 lines, "@@TA end NAME STATUS".
set -u
. "$TA_TOP/tests/lib.sh"

OUTS=300
CPUIDS=40
prog=$TA_BUILD/tests/kvmx86

[ "$(uname -m)" = x86_64 ] || skip "the nested-SVM host is x86_64 only (this is $(uname -m))"
command -v qemu-system-x86_64 >/dev/null ||
	skip "qemu-system-x86_64 not installed (scripts/deps.sh check)"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (scripts/deps.sh check)"
[ -x "$prog" ] || fail "$prog missing (make units)"

t0=$(date +%s)
ta_tmpdir
qpid=""
cleanup() {
	# The QEMU of a run cut short (timeout forwards the signal to it).
	if [ -n "$qpid" ]; then
		kill "$qpid" 2>/dev/null
		wait "$qpid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

image=$("$TA_TOP/scripts/svm-host.sh" "$TOPOADVISOR" "$prog" 2>"$tmp/build.err")
rc=$?
[ $rc -eq 3 ] && skip "no guest kernel: $(tail -n 1 "$tmp/build.err") (offline?)"
[ $rc -eq 0 ] || { cat "$tmp/build.err"; fail "svm-host.sh exited $rc"; }
t1=$(date +%s)

timeout 300 qemu-system-x86_64 -accel tcg -cpu qemu64,+svm -m 1024 -smp 1 \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$image/vmlinuz" -initrd "$image/initrd" \
	-append "console=ttyS0 panic=-1 ta_outs=$OUTS ta_cpuids=$CPUIDS" \
	-serial "file:$tmp/console.log" -serial "file:$tmp/data.log" &
qpid=$!
wait "$qpid"
rc=$?
qpid=""
t2=$(date +%s)
show_console() { echo "--- guest console (tail)"; tail -n 30 "$tmp/console.log"; }
[ $rc -eq 0 ] || { show_console; fail "qemu exited $rc (124: the guest did not power off in 300 s)"; }
grep -q '^@@TA done' "$tmp/data.log" || { show_console; fail "the guest did not finish its steps"; }

# Sections into files: $tmp/out/NAME and NAME.rc.
mkdir "$tmp/out"
tr -d '\r' <"$tmp/data.log" | awk -v d="$tmp/out" '
	/^@@TA begin / { f = d "/" $3 ".b64"; printf "" > f; next }
	/^@@TA end / { close(f); print $4 > (d "/" $3 ".rc"); close(d "/" $3 ".rc"); f = ""; next }
	f != "" { print >> f }'
for f in "$tmp"/out/*.b64; do
	base64 -d "$f" >"${f%.b64}" || fail "section $(basename "$f" .b64) is not base64"
done
out=$tmp/out
step_ok() { # name
	[ -f "$out/$1.rc" ] || { show_console; fail "the guest sent no '$1' result"; }
	[ "$(cat "$out/$1.rc")" = 0 ] || {
		echo "--- $1 stdout"; cat "$out/$1"; echo "--- $1 stderr"; cat "$out/$1.err"
		fail "'$1' exited $(cat "$out/$1.rc") in the guest"
	}
}
step_ok svmflag
[ "$(cat "$out/svmflag")" -gt 0 ] 2>/dev/null ||
	skip "this QEMU's TCG CPU offers no SVM to the guest (qemu64,+svm)"
step_ok kvm
step_ok probe
step_ok live
step_ok record

# The recording read here, by the tool and by trace-cmd itself.
"$TOPOADVISOR" --json exits "$out/rec.dat" >"$out/offline.json" 2>"$out/offline.err" ||
	{ cat "$out/offline.err"; fail "exits on the guest's recording exited $?"; }
trace-cmd report -R "$out/rec.dat" >"$out/report.txt" 2>/dev/null ||
	fail "trace-cmd report cannot read the guest's recording"

python3 - "$out" "$OUTS" "$CPUIDS" <<'PY' || fail "wrong answers (above)"
import json, re, sys
from collections import Counter
d, outs, cpuids = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = []
def check(what, got, want):
    if got != want:
        bad.append(f"{what}: {got!r}, expected {want!r}")

probe = json.load(open(f"{d}/probe"))
for k, v in (("arch", "x86_64"), ("kvm_device", True), ("kvm_usable", True),
             ("events_kvm", True), ("events_kvm_hv", False), ("subcores_per_core", None),
             ("kvm_hv_parameters", None)):
    check(f"probe {k}", probe.get(k), v)

def split(path):
    """The program's own line and the JSON after it (trace -- CMD shares stdout)."""
    text = open(path).read()
    m = re.search(r"^kvmx86: pid=(\d+) outs=(\d+) hlt=1 cpuids=(\d+) restarts=1$", text, re.M)
    return m, text[m.end():] if m else text

def reasons(j):
    return {(x["source"], x["name"]): x["count"] for x in j["exit_reasons"]}

def check_run(tag, j, pid):
    r = reasons(j)
    check(f"{tag} IOIO", r.get(("svm", "IOIO")), outs)
    check(f"{tag} CPUID", r.get(("svm", "CPUID")), cpuids)
    check(f"{tag} HLT", r.get(("svm", "HLT")), 1)
    check(f"{tag} userspace IO", r.get(("userspace", "IO")), outs)
    check(f"{tag} userspace HLT", r.get(("userspace", "HLT")), 1)
    check(f"{tag} userspace RESTART", r.get(("userspace", "RESTART")), 1)
    check(f"{tag} vmx reasons", [k for k in r if k[0] == "vmx"], [])
    check(f"{tag} lost", (j["lost_events"], j["lost_events_exact"]), (0, True))
    check(f"{tag} applicable", j["applicable"], False)
    procs = [(p["tgid"], p["comm"]) for p in j["processes"]]
    check(f"{tag} processes", procs, [(pid, "kvmx86")])
    svm = sum(c for (s, _), c in r.items() if s == "svm")
    check(f"{tag} guest_exits", j["processes"][0]["guest_exits"] if procs else None, svm)
    byv = {x["vcpu"] for x in j["exit_reasons_by_vcpu"] if x["source"] == "svm"}
    check(f"{tag} svm vCPUs", byv, {0})
    return r

m, live_json = split(f"{d}/live")
if not m:
    bad.append("live: no kvmx86 line in: " + open(f"{d}/live").read()[:300])
else:
    live = check_run("live", json.loads(live_json), int(m.group(1)))

m, _ = split(f"{d}/record")
off = json.load(open(f"{d}/offline.json"))
if not m:
    bad.append("record: no kvmx86 line")
else:
    offr = check_run("offline", off, int(m.group(1)))
    check("offline per thread", off.get("x86_per_thread"), True)
    # trace-cmd's raw report of the same file: every kvm_exit and
    # kvm_userspace_exit record, by its raw fields.
    svm, user = Counter(), Counter()
    for line in open(f"{d}/report.txt"):
        f = dict(re.findall(r"(\w+)=(-?\w+)", line))
        if " kvm_exit:" in line:
            check("report isa", f.get("isa"), "2")
            svm[int(f["exit_reason"], 0)] += 1
        elif " kvm_userspace_exit:" in line:
            e = int(f["errno"])
            user[e if e < 0 else int(f["reason"])] += 1
    check("events vs trace-cmd", off["events"], sum(svm.values()) + sum(user.values()))
    ours_svm = Counter({x["reason"]: x["count"] for x in off["exit_reasons"]
                        if x["source"] == "svm"})
    ours_user = Counter({x["reason"]: x["count"] for x in off["exit_reasons"]
                         if x["source"] == "userspace"})
    check("svm reasons vs trace-cmd", dict(ours_svm), dict(svm))
    check("userspace reasons vs trace-cmd", dict(ours_user), dict(user))
    print("offline exits:", {f"{k[0]}/{k[1]}": v for k, v in sorted(offr.items())})
if m and 'live' in dir():
    print("live exits:   ", {f"{k[0]}/{k[1]}": v for k, v in sorted(live.items())})
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
t3=$(date +%s)
echo "svm-exits: host image $((t1 - t0)) s, guest boot + probe + live + record $((t2 - t1)) s, total $((t3 - t0)) s"
pass
