#!/bin/sh
# `exits` on a real x86 recording: tests/fixtures/real/svm/trace.dat was
# recorded by trace-cmd inside the nested-SVM test host (svm-exits.sh with
# TA_SVM_KEEP) while tests/helpers/kvmx86 ran two vCPU threads;
# kvmx86.out is that program's output (its pid, counts per vCPU and each
# vCPU's thread), formats/ the kernel's event formats there (kernel: Debian's
# 6.1 cloud kernel, kvm-amd, no nested paging).  Checked: the
# exits the program made, every reason against trace-cmd's raw report of
# the file, the failed KVM_RUN (errno -4) not counted as an IO exit, the
# entries named by thread, and the formats inside the file being the
# committed ones.
set -u
. "$TA_TOP/tests/lib.sh"

fx=$TA_TOP/tests/fixtures/real/svm
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (scripts/deps.sh check)"
ta_tmpdir

"$TOPOADVISOR" --json exits "$fx/trace.dat" >"$tmp/exits.json" ||
	fail "exits --json exited $?"
trace-cmd report -R "$fx/trace.dat" >"$tmp/report.txt" 2>/dev/null ||
	fail "trace-cmd cannot read the fixture"
python3 "$TA_TOP/tests/helpers/svm-check.py" fixture "$fx/kvmx86.out" "$tmp/exits.json" \
	"$tmp/report.txt" || fail "wrong answer on the real SVM recording (above)"

# The text report says the entries are threads: each vCPU under its own,
# named, with its guest exits.
"$TOPOADVISOR" -v exits "$fx/trace.dat" >"$tmp/exits.txt" || fail "exits -v exited $?"
grep -q "^Exit reasons per process and vCPU (x86: per thread" "$tmp/exits.txt" &&
	grep -q "^     TID  COMMAND  *GUEST_EXITS$" "$tmp/exits.txt" ||
	fail "exits -v does not say its x86 entries are threads"
outs=$(sed -n 's/^kvmx86: .* outs=\([0-9]*\) .*/\1/p' "$fx/kvmx86.out")
vcpus=0
for line in $(sed -n 's/^kvmx86: vcpu=\([0-9]*\) tid=\([0-9]*\)$/\1:\2/p' "$fx/kvmx86.out"); do
	v=${line%:*} t=${line#*:}
	grep -Eq "^  tid +$t +vcpu $v +svm +IOIO +$outs$" "$tmp/exits.txt" ||
		{ cat "$tmp/exits.txt"; fail "no IOIO line of thread $t on vCPU $v"; }
	grep -Eq "^ +$t +vcpu$v +[1-9][0-9]*$" "$tmp/exits.txt" ||
		{ cat "$tmp/exits.txt"; fail "thread $t (vcpu$v) not in the guest exits table"; }
	vcpus=$((vcpus + 1))
done
[ $vcpus -ge 2 ] || fail "the fixture should have several vCPU threads, has $vcpus"
grep -Eq "^  userspace +RESTART +-0x4 +$vcpus$" "$tmp/exits.txt" ||
	{ cat "$tmp/exits.txt"; fail "the failed KVM_RUNs are not shown as RESTART"; }

# The formats recorded in the file are the committed ones.
for e in kvm_exit kvm_userspace_exit; do
	format_is_recorded "$fx/trace.dat" "$e" "$fx/formats/$e.format" ||
		fail "formats/$e.format differs from the recording's"
done
grep -q 'field:unsigned int exit_reason;' "$fx/formats/kvm_exit.format" &&
	grep -q 'field:int errno;' "$fx/formats/kvm_userspace_exit.format" || fail "svm formats"
pass
