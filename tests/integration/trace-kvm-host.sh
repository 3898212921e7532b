#!/bin/sh
# Live on this host's own KVM: `trace --json -- kvmx86` while the program's
# vCPU threads (and then the program) exit within milliseconds, before the
# trace reader's first round.  Their real kvm:kvm_userspace_exit records must
# still be counted under the program's process (the kernel's saved_tgids,
# filled through the instance's record-tgid option), not under each vanished
# thread, with the failed immediate-exit KVM_RUNs as RESTART.  This host's
# /dev/kvm (PVM) fires no kvm:kvm_exit; svm-exits.sh covers those.
set -u
. "$TA_TOP/tests/lib.sh"

prog=$TA_BUILD/tests/kvmx86
[ "$(uname -m)" = x86_64 ] || skip "kvmx86 is x86_64 only"
[ "$(id -u)" -eq 0 ] || skip "live tracing needs root"
[ -x "$prog" ] || fail "$prog missing (make units)"
[ -d /sys/kernel/tracing/events/kvm/kvm_userspace_exit ] ||
	skip "no kvm:kvm_userspace_exit event on this host (kvm module not loaded)"
"$prog" 1 1 1 >/dev/null 2>&1 || skip "this host's /dev/kvm cannot run kvmx86 ($("$prog" 1 1 1 2>&1 | tail -n 1))"
ta_tmpdir

for run in 1 2 3; do
	"$TOPOADVISOR" --json trace -- "$prog" 50 5 3 >"$tmp/live.json" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "trace exited $?"; }
	python3 "$TA_TOP/tests/helpers/svm-check.py" --host "host run $run" \
		"$tmp/live.json" "$tmp/live.json" || fail "wrong live answer (above)"
done

# A sweep whose benchmark runs on the host (guest.runner: host) traces it
# host-wide: each run stores the program's own exits.
cat >"$tmp/sweep.yaml" <<EOF
name: host-kvm
guest: {runner: host}
topology: [1x1x1]
repetitions: 2
benchmark:
  kind: command
  argv: [$prog, "300", "40", "1"]
  parse: 'outs=(?<outs>\\d+)'
  metric: {name: outs}
EOF
TOPOADVISOR_LOCK=$tmp/lock "$TOPOADVISOR" --db "$tmp/db" -q run "$tmp/sweep.yaml" >/dev/null 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "the host-runner sweep failed"; }
got=$(sqlite3 "$tmp/db" "SELECT run_id || ':' || count FROM exit_counts
	WHERE source = 'kvm' AND reason = 'IO' ORDER BY run_id")
[ "$(echo $got)" = "1:300 2:300" ] || fail "host-runner runs stored IO exits '$got', expected 300 each"
pass
