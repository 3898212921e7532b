#!/bin/sh
# Real x86 KVM exits: an x86_64 TCG guest with nested SVM (qemu64,+svm,
# built by scripts/svm-host.sh) loads kvm-amd and runs tests/helpers/kvmx86
# with VCPUS vCPU threads, whose exits are known: per vCPU OUTS IOIO, CPUIDS
# CPUID and one HLT kvm:kvm_exit, OUTS KVM_EXIT_IO and one KVM_EXIT_HLT
# kvm:kvm_userspace_exit, and one immediate-exit run (errno -4).  Inside,
# the topoadvisor binary under test runs `probe --json` and `trace --json --
# kvmx86` on the real events, and trace-cmd records a second run; here,
# `exits --json` reads that recording and both are checked against the
# known counts and against trace-cmd's own raw report of the recording.
#
# The guest's init (see svm-host.sh) sends results on its second serial port
# as "@@TA begin NAME", base64 lines, "@@TA end NAME STATUS".
# TA_SVM_KEEP=DIR keeps the recording, its event formats and the program's
# output there, as tests/fixtures/real/svm/ holds them (how it was made).
set -u
. "$TA_TOP/tests/lib.sh"

OUTS=300
CPUIDS=40
VCPUS=2
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

# The whole program (topoadvisor-core runs every command): the guest gets one file.
image=$("$TA_TOP/scripts/svm-host.sh" "$TOPOADVISOR-core" "$prog" 2>"$tmp/build.err")
rc=$?
[ $rc -eq 3 ] && skip "no guest kernel: $(tail -n 1 "$tmp/build.err") (offline?)"
[ $rc -eq 0 ] || { cat "$tmp/build.err"; fail "svm-host.sh exited $rc"; }
t1=$(date +%s)

timeout 300 qemu-system-x86_64 -accel tcg -cpu qemu64,+svm -m 1024 -smp 1 \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$image/vmlinuz" -initrd "$image/initrd" \
	-append "console=ttyS0 panic=-1 ta_outs=$OUTS ta_cpuids=$CPUIDS ta_vcpus=$VCPUS" \
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
		show_console
		fail "'$1' exited $(cat "$out/$1.rc") in the guest"
	}
}
# grep -c: the count of CPUs with the svm flag, and status 1 when none.
[ -f "$out/svmflag.rc" ] || { show_console; fail "the guest sent no 'svmflag' result"; }
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

python3 - "$out/probe" <<'PY' || fail "probe --json in the nested-SVM host is wrong (above)"
import json, sys
j = json.load(open(sys.argv[1]))
want = {"arch": "x86_64", "kvm_device": True, "kvm_usable": True, "events_kvm": True,
        "events_kvm_hv": False, "subcores_per_core": None, "kvm_hv_parameters": None}
bad = {k: j.get(k) for k, v in want.items() if j.get(k) != v}
print("probe:", "ok" if not bad else f"wrong {bad}")
sys.exit(1 if bad else 0)
PY
check=$TA_TOP/tests/helpers/svm-check.py
python3 "$check" live "$out/live" "$out/live" || fail "wrong live answer (above)"
python3 "$check" offline "$out/record" "$out/offline.json" "$out/report.txt" ||
	fail "wrong answer on the recording (above)"
if [ -n "${TA_SVM_KEEP:-}" ]; then
	mkdir -p "$TA_SVM_KEEP/formats"
	cp "$out/rec.dat" "$TA_SVM_KEEP/trace.dat"
	for e in kvm_exit kvm_userspace_exit; do
		cp "$out/$e.format" "$TA_SVM_KEEP/formats/$e.format"
	done
	grep '^kvmx86:' "$out/record" >"$TA_SVM_KEEP/kvmx86.out"
	cp "$out/kernel" "$TA_SVM_KEEP/kernel"
fi
t3=$(date +%s)
echo "svm-exits: host image $((t1 - t0)) s, guest boot + probe + live + record $((t2 - t1)) s, total $((t3 - t0)) s"
pass
